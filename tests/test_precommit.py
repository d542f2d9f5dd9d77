"""The pre-commit hook, run by the real ``pre-commit`` in throwaway git repositories.

The hook repository is a snapshot of this checkout's working tree (tracked and untracked files
that git does not ignore), committed in a temporary git repository, so the test exercises the
code and the ``.pre-commit-hooks.yaml`` as they are now, committed or not. pre-commit builds the
hook's virtual environment once (it installs poslint and its dependencies from the package
index) and reuses it for every test here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from poslint.edge.cli import main

ROOT = Path(__file__).resolve().parents[1]
BUGGY = (ROOT / "examples" / "llama_rope_bf16.py").read_text(encoding="utf-8")
CLEAN = "import torch\n\n\ndef positions(n):\n    return torch.arange(n, dtype=torch.float32)\n"
GIT_ID = ["-c", "user.name=poslint tests", "-c", "user.email=tests@poslint.invalid", "-c", "commit.gpgsign=false"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple:
    """(path, rev) of a git repository holding this checkout's working tree."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # skips files deleted from the working tree but still in the index
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "snapshot", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def project(tmp_path: Path, files: dict) -> Path:
    """A git repository with ``files`` added (pre-commit's --all-files runs on tracked files)."""
    work = tmp_path / "project"
    work.mkdir()
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    git("init", "-q", cwd=work)
    git("add", "-A", cwd=work)
    return work


def pre_commit(args, cwd: Path, home: Path, **env_vars: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1", **env_vars)
    env.pop("POSLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def notebook(source: str) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
              "source": source.splitlines(keepends=True)}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_hook_definition_follows_ruff_pre_commit_conventions():
    import yaml  # pre-commit depends on PyYAML

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "poslint" and hook["language"] == "python"
    assert hook["entry"] == "poslint --force-exclude" and "args" not in hook
    assert hook["types_or"] == ["python", "pyi", "jupyter"]
    assert hook["require_serial"] is False  # each file fixed on its own; the cache tolerates parallel runs


def test_buggy_file_fails_and_clean_file_passes(tmp_path, hook_repo, pre_commit_home):
    repo, _ = hook_repo
    work = project(tmp_path, {"buggy.py": BUGGY, "clean.py": CLEAN, "rope.ipynb": notebook(BUGGY)})
    result = pre_commit(["try-repo", str(repo), "poslint", "--all-files"], work, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "poslint" in output and "Failed" in output
    assert "buggy.py:31:13: POS101" in output
    assert "rope.ipynb:cell 1:31:13: POS101" in output
    assert "clean.py" not in output
    # A check never writes.
    assert (work / "buggy.py").read_text(encoding="utf-8") == BUGGY


def test_clean_files_pass(tmp_path, hook_repo, pre_commit_home):
    repo, _ = hook_repo
    work = project(tmp_path, {"clean.py": CLEAN, "other.py": "x = 1\n"})
    result = pre_commit(["try-repo", str(repo), "poslint", "--all-files"], work, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def test_excluded_files_pass_quietly_thanks_to_force_exclude(tmp_path, hook_repo, pre_commit_home):
    repo, _ = hook_repo
    work = project(tmp_path, {"gen_rope.py": BUGGY,
                              "pyproject.toml": '[tool.poslint]\nextend-exclude = ["gen_*.py"]\n'})
    result = pre_commit(["try-repo", str(repo), "poslint", "--all-files", "--verbose"], work, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "POS1" not in result.stdout and "All checks passed" not in result.stdout


def test_fixer_variant_fixes_the_file(tmp_path, hook_repo, pre_commit_home):
    repo, rev = hook_repo
    work = project(tmp_path, {"buggy.py": BUGGY, "clean.py": CLEAN})
    config = work / "fixer.yaml"
    config.write_text(f"repos:\n  - repo: {json.dumps(str(repo))}\n    rev: {rev}\n    hooks:\n"
                      "      - id: poslint\n        args: [--fix, --unsafe-fixes]\n", encoding="utf-8")
    result = pre_commit(["run", "--config", str(config), "--all-files"], work, pre_commit_home)
    fixed = (work / "buggy.py").read_text(encoding="utf-8")
    # pre-commit fails a hook that modified files, so the user reviews the change.
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    assert fixed != BUGGY
    assert "t = torch.arange(self.max_seq_len_cached, device=device, dtype=torch.float32)" in fixed
    assert "with torch.autocast(" in fixed
    assert (work / "clean.py").read_text(encoding="utf-8") == CLEAN
    # Fixed: a second run passes and changes nothing.
    again = pre_commit(["run", "--config", str(config), "--all-files"], work, pre_commit_home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work / "buggy.py").read_text(encoding="utf-8") == fixed


def test_no_files_left_after_exclusion_is_silent_and_exits_0(tmp_path, monkeypatch):
    from click.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "gen.py").write_text(BUGGY, encoding="utf-8")
    result = CliRunner().invoke(main, ["--force-exclude", "--extend-exclude", "gen.py", "gen.py"])
    assert result.exit_code == 0
    assert result.stdout == "" and result.stderr == ""


def test_named_stub_files_are_linted_without_a_note(tmp_path, monkeypatch):
    from click.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "types.pyi").write_text("x: int\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["types.pyi"])
    assert result.exit_code == 0 and result.stdout == ""
    assert "skipped" not in result.stderr


def _findings(output: str) -> set:
    return {line.strip() for line in output.splitlines() if ": POS" in line}


def test_nested_configurations_give_one_result_however_pre_commit_batches(tmp_path, hook_repo, pre_commit_home):
    """One commit with a root and a nested project: all files in one poslint run, and each file in
    a run of its own, report exactly the same findings (each file uses its closest config)."""
    repo, _ = hook_repo
    files = {"pyproject.toml": '[tool.poslint]\nignore = ["POS102"]\n', "top.py": BUGGY,
             "sub/pyproject.toml": '[tool.poslint]\nextend = "../pyproject.toml"\nignore = ["POS103"]\n',
             "sub/inner.py": BUGGY, "sub/deeper/more.py": BUGGY,
             "other/poslint.toml": 'select = ["POS103"]\n', "other/o.py": BUGGY}
    work = project(tmp_path, files)
    one_batch = pre_commit(["try-repo", str(repo), "poslint", "--all-files", "--verbose"], work, pre_commit_home,
                           PRE_COMMIT_NO_CONCURRENCY="1")
    assert one_batch.returncode == 1, one_batch.stdout + one_batch.stderr
    separately = set()
    for name in sorted(n for n in files if n.endswith(".py")):
        alone = pre_commit(["try-repo", str(repo), "poslint", "--verbose", "--files", name], work, pre_commit_home)
        assert alone.returncode == 1, alone.stdout + alone.stderr
        separately |= _findings(alone.stdout)
    assert _findings(one_batch.stdout) == separately
    codes = {(line.split(":")[0], line.split(": ")[1].split()[0]) for line in separately}
    assert codes == {("top.py", "POS101"), ("top.py", "POS103"), ("sub/inner.py", "POS101"),
                     ("sub/deeper/more.py", "POS101"), ("other/o.py", "POS103")}
    # The hook's cache stays out of git's way: it ignores itself.
    assert (work / ".poslint_cache").is_dir() and (work / "sub" / ".poslint_cache").is_dir()
    assert ".poslint_cache" not in git("status", "--porcelain", "--untracked-files=all", cwd=work)
