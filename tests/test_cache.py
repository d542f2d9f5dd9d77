"""The content-hash cache (poslint/engine/cache.py): same results, never a crash, never a stale result."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.engine import cache as cache_module

ROOT = Path(__file__).resolve().parent.parent
BUGGY = ROOT / "tests" / "fixtures" / "rope" / "checker" / "llama_hf_2023.py"
CLEAN = "import torch\n\n\ndef f(x):\n    return x + 1\n"


def run(*args, env=None):
    return CliRunner().invoke(main, ["check", "--output-format", "json", *args], env=env)


def findings(result):
    return [(d["filename"], d["location"]["row"], d["code"], d["message"], json.dumps(d.get("fix"), sort_keys=True))
            for d in json.loads(result.stdout)]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_CACHE_DIR", raising=False)
    (tmp_path / "src").mkdir()
    shutil.copy(BUGGY, tmp_path / "src" / "rope.py")
    (tmp_path / "src" / "clean.py").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "src" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    return tmp_path


def cache_files(directory: Path):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_cold_and_warm_runs_agree_with_no_cache(project):
    reference = run("--no-cache", "src")
    assert not (project / ".poslint_cache").exists()
    cold = run("src")
    warm = run("src")
    assert reference.exit_code == cold.exit_code == warm.exit_code == 1
    assert findings(reference) == findings(cold) == findings(warm)
    names = cache_files(project / ".poslint_cache")
    assert "CACHEDIR.TAG" in names and ".gitignore" in names
    assert (project / ".poslint_cache" / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55")


def test_a_warm_run_does_not_check_again(project, monkeypatch):
    reference = findings(run("--no-cache", "src"))
    run("src")
    import poslint.engine.parallel

    def fail(*args, **kwargs):
        raise AssertionError("a cached file was checked again")

    monkeypatch.setattr(poslint.engine.parallel, "lint_file", fail)
    warm = run("src")
    assert warm.exit_code == 1, warm.output
    assert findings(warm) == reference


def test_cache_dir_option_and_environment_variable(project):
    run("--cache-dir", "elsewhere", "src")
    assert "CACHEDIR.TAG" in cache_files(project / "elsewhere")
    run("src", env={"POSLINT_CACHE_DIR": str(project / "from_env")})
    assert "CACHEDIR.TAG" in cache_files(project / "from_env")
    assert not (project / ".poslint_cache").exists()


def test_the_cache_lives_in_the_project_root(project):
    (project / "pyproject.toml").write_text("[tool.poslint]\n", encoding="utf-8")
    os.chdir(project / "src")
    run(".")
    assert (project / ".poslint_cache").exists()
    assert not (project / "src" / ".poslint_cache").exists()


def _the_cache_file(project: Path) -> Path:
    [path] = [p for p in (project / ".poslint_cache").iterdir() if p.name.startswith("poslint-")]
    return path


@pytest.mark.parametrize("content", [b"\x00garbage", b"{}", b'{"format": 1, "index": [], "entries": {}}',
                                     b'{"format": 1, "index": {}, "entries": {"x": 1}}', b""])
def test_a_corrupt_cache_is_ignored_with_a_warning(project, content):
    reference = findings(run("--no-cache", "src"))
    run("src")
    _the_cache_file(project).write_bytes(content)
    result = run("src")
    assert findings(result) == reference
    if content not in (b'{"format": 1, "index": {}, "entries": {"x": 1}}',):
        assert "poslint: warning: cache" in result.stderr
    assert findings(run("src")) == reference  # and rewritten


def test_corrupt_entries_are_ignored(project):
    reference = findings(run("--no-cache", "src"))
    run("src")
    path = _the_cache_file(project)
    data = json.loads(path.read_text())
    for key in data["entries"]:
        data["entries"][key] = [{"line": "x"}] if data["entries"][key] else 7
    path.write_text(json.dumps(data))
    result = run("src")
    assert findings(result) == reference
    assert "bad entry" in result.stderr


def test_an_unwritable_cache_is_a_warning(project):
    (project / "blocked").write_text("a file, not a directory", encoding="utf-8")
    reference = run("--no-cache", "src")
    result = run("--cache-dir", str(project / "blocked"), "src")
    assert result.exit_code == reference.exit_code == 1
    assert findings(result) == findings(reference)
    assert "poslint: warning: cannot write the cache" in result.stderr
    quiet = run("-q", "--cache-dir", str(project / "blocked"), "src")
    assert "warning" not in quiet.stderr


def test_a_changed_file_is_checked_again(project):
    run("src")
    target = project / "src" / "clean.py"
    target.write_text(BUGGY.read_text(encoding="utf-8"), encoding="utf-8")
    assert findings(run("src")) == findings(run("--no-cache", "src"))
    # Same size, same mtime: only the content tells; a recent mtime is never trusted.
    stat = target.stat()
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("torch.bfloat16", "torch.float32").replace("self.inv_freq.dtype",
                                                                            "torch.float32" + " " * 4)[:len(text)]
                      .ljust(len(text)), encoding="utf-8")
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert target.stat().st_size == stat.st_size
    assert findings(run("src")) == findings(run("--no-cache", "src"))


def test_old_stats_are_trusted_and_rehashed_when_they_change(project):
    run("src")
    old = 1_000_000_000_000_000_000
    for path in (project / "src").iterdir():
        os.utime(path, ns=(old, old))
    run("src")  # records the old stats
    data = json.loads(_the_cache_file(project).read_text())
    assert all(row[0] == old for row in data["index"].values())
    # touching a file (new mtime, same content) reads and hashes it again: still a hit
    (project / "src" / "rope.py").touch()
    assert findings(run("src")) == findings(run("--no-cache", "src"))


def test_results_depend_on_the_selection_and_noqa(project):
    (project / "src" / "rope.py").write_text(BUGGY.read_text(encoding="utf-8").replace(
        "\n", "  # noqa\n"), encoding="utf-8")
    for args in (["--select", "POS101"], ["--select", "POS1", "--ignore", "POS101"], ["--ignore-noqa"], []):
        assert findings(run(*args, "src")) == findings(run("--no-cache", *args, "src")), args
        assert findings(run(*args, "src")) == findings(run("--no-cache", *args, "src")), args


def test_fix_never_uses_a_cached_result_that_has_fixes(project):
    run("--unsafe-fixes", "src")  # caches the findings, with their fixes
    fixed = run("--fix", "--unsafe-fixes", "src")
    shutil.copy(BUGGY, project / "reference.py")
    assert "Fixed" in fixed.stderr
    assert (project / "src" / "rope.py").read_text(encoding="utf-8") != BUGGY.read_text(encoding="utf-8")
    assert findings(run("src")) == findings(run("--no-cache", "src"))
    again = run("--fix", "--unsafe-fixes", "src")
    assert findings(again) == findings(run("--no-cache", "--fix", "--unsafe-fixes", "src"))


def test_a_new_poslint_starts_a_new_cache_file(project, monkeypatch):
    run("src")
    first = _the_cache_file(project).name
    monkeypatch.setattr(cache_module, "_source_fingerprint", lambda: "changed")
    assert findings(run("src")) == findings(run("--no-cache", "src"))
    assert _the_cache_file(project).name != first  # and the old one is gone


def test_an_edit_anywhere_in_the_package_changes_the_fingerprint(tmp_path, monkeypatch):
    # The analysis and the rules decide the findings as much as the engine does: a copy of the
    # package whose interpreter alone differs must not read the original's cache.
    package = Path(cache_module.__file__).resolve().parent.parent
    copy = tmp_path / "poslint"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "__file__", str(copy / "engine" / "cache.py"))
    before = cache_module._source_fingerprint()
    interpreter = copy / "analysis" / "interpreter.py"
    interpreter.write_text(interpreter.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert cache_module._source_fingerprint() != before


def test_a_copied_file_is_a_hit(project):
    run("src")
    shutil.copy(project / "src" / "rope.py", project / "src" / "copy.py")
    data = json.loads(_the_cache_file(project).read_text())
    result = run("src")
    assert findings(result) == findings(run("--no-cache", "src"))
    assert len(json.loads(_the_cache_file(project).read_text())["entries"]) == len(data["entries"])


def test_an_imported_file_outside_the_run_is_hashed_once_not_in_every_warm_run(tmp_path, monkeypatch):
    # Linting one file of a package (pre-commit) makes the package's other modules dependencies
    # that no run lints: their digests are remembered by stat like the linted files'.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_CACHE_DIR", raising=False)
    shutil.copytree(ROOT / "tests" / "fixtures" / "projects" / "split_rotary", tmp_path, dirs_exist_ok=True)
    rotary = tmp_path / "splitrot" / "layers" / "rotary.py"
    old = 1_600_000_000
    for path in tmp_path.rglob("*.py"):
        os.utime(path, (old, old))  # not racy: a stat recorded now is trusted
    hashed = []
    real = cache_module.current_digest
    monkeypatch.setattr(cache_module, "current_digest", lambda path: hashed.append(path) or real(path))
    target = os.path.join("splitrot", "model.py")
    first = findings(run(target))
    assert [f[2] for f in first] == ["POS101"]
    hashed.clear()
    assert findings(run(target)) == first
    assert str(rotary.resolve()) in hashed  # the first warm run reads it
    hashed.clear()
    assert findings(run(target)) == first
    assert not hashed  # the next ones trust its stat
    text = rotary.read_text()
    rotary.write_text(text.replace("freqs = positions[..., None] *",
                                   "freqs = torch.arange(positions.shape[0], dtype=torch.float32)[..., None] *"))
    assert findings(run(target)) == []  # a changed stat is read again
