"""Reliability, second round (issue 15): no crash, no lost edit, no wrong report, no write
outside the tree. Each test reproduces one failure of the issue.

The tests that could crash the interpreter or that need real signals run poslint in a child
process; the others run the CLI in this process, on MODEL, a small rotary module with one
safe and one unsafe fix.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import poslint.edge.cli
import poslint.engine.linter
import poslint.fix.fixer
from poslint.edge.cli import main
from poslint.fix.fixer import LIBCST_MAX_DEPTH, Normalised, add_imports, verify

ROOT = Path(__file__).parent.parent

MODEL = '''import torch
from torch import nn


class Rotary(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, seq_len):
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
'''
MODEL_FINDINGS = ["12:13: POS101", "13:32: POS102"]
MODEL_SAFE_FIXED = MODEL.replace("dtype=self.inv_freq.dtype)", "dtype=torch.float32)")
FORMATS = ("concise", "full", "json", "github", "sarif", "pylint")


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def run_child(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "poslint", *args], capture_output=True, text=True, timeout=600,
                          **kwargs)


def findings(stdout: str, path: str):
    out = []
    for line in stdout.splitlines():
        if line.startswith(path + ":"):
            location, rest = line[len(path) + 1:].split(": ", 1)
            out.append(f"{location}: {rest.split()[0]}")
    return out


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POSLINT_CACHE_DIR", str(tmp_path / ".cache"))
    monkeypatch.delenv("POSLINT_OUTPUT_FORMAT", raising=False)
    return tmp_path


def chain(op: str, n: int) -> str:
    return "\nflag = " + f" {op} ".join(["x"] * n) + "\n"


# --- crashes and resource use ------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_long_boolean_chains_never_crash_fix_and_the_other_files_are_fixed(mode):
    # libcst's parser used to overflow the C stack on these: exit 139, every other fix lost.
    Path("a_model.py").write_text(MODEL)
    Path("b_and.py").write_text(MODEL + chain("and", 8000))
    Path("c_or.py").write_text(MODEL + chain("or", 9000))
    Path("d_deeper.py").write_text(MODEL + chain("and", LIBCST_MAX_DEPTH + 5000))
    done = run_child(mode, "-j", "1", "--no-cache", ".")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    refused = [line for line in done.stderr.splitlines() if "not fixed" in line]
    assert len(refused) == 1 and refused[0].startswith("poslint: error: d_deeper.py: not fixed: ")
    assert "libcst" in refused[0] and "levels deep" in refused[0]
    if mode == "--fix":
        assert Path("a_model.py").read_text() == MODEL_SAFE_FIXED
        assert Path("b_and.py").read_text() == MODEL_SAFE_FIXED + chain("and", 8000)
        assert Path("c_or.py").read_text() == MODEL_SAFE_FIXED + chain("or", 9000)
        assert Path("d_deeper.py").read_text() == MODEL + chain("and", LIBCST_MAX_DEPTH + 5000)
    else:
        assert all(f"+++ b/{name}" in done.stdout for name in ("a_model.py", "b_and.py", "c_or.py"))
        assert "d_deeper.py" not in done.stdout


def test_a_huge_file_that_can_hold_no_finding_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setattr(poslint.engine.linter, "LARGE_TEXT", 2000)
    Path("generated.py").write_text("x = [" + ", ".join(["1"] * 1000) + "\n")  # a syntax error, too
    Path("model.py").write_text(MODEL)
    for mode in ((), ("--fix",)):
        result = run(*mode, "--no-cache", ".")
        assert "poslint: note: generated.py: not checked for syntax errors: it is 0.0 MB, more than the 0 MB " \
               "poslint parses, and holds nothing that the rules look for" in result.stderr
        assert "generated.py:" not in result.stdout  # not parsed, so no POS001 either
    assert Path("model.py").read_text() == MODEL_SAFE_FIXED
    result = run("-q", "--no-cache", "generated.py")
    assert "note" not in result.stderr


def test_a_huge_file_that_can_hold_a_finding_is_linted_and_fixed_as_usual(monkeypatch):
    monkeypatch.setattr(poslint.engine.linter, "LARGE_TEXT", 200)
    Path("model.py").write_text(MODEL)
    result = run("--no-cache", "model.py")
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS and result.exit_code == 1
    result = run("--fix", "--no-cache", "model.py")
    assert "note" not in result.stderr and result.exit_code == 1
    assert Path("model.py").read_text() == MODEL_SAFE_FIXED


def test_a_text_too_big_for_libcst_is_not_fixed(monkeypatch):
    # libcst needs about 4 KB a node: a 10-million-element list would need tens of GB.
    monkeypatch.setattr(poslint.fix.fixer, "LIBCST_MAX_NODES", 500)
    table = "\nTABLE = [" + ", ".join(["1"] * 600) + "]\n"
    Path("model.py").write_text(MODEL + table)
    Path("small.py").write_text(MODEL)
    result = run("--fix", "--no-cache", ".")
    assert "poslint: error: model.py: not fixed: the fixed text cannot be checked with libcst: it has " in result.stderr
    assert "syntax nodes, more than the 500 that poslint gives libcst" in result.stderr
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS and result.exit_code == 2
    assert Path("model.py").read_text() == MODEL + table
    assert Path("small.py").read_text() == MODEL_SAFE_FIXED


def test_a_20_mb_generated_file_is_skipped_quickly():
    # Issue 15: a 10-million-element list took 204 s to lint; the measurement is in benchmarks/RESULTS.md.
    from poslint.engine.linter import LARGE_TEXT, LintOptions, lint_file
    from poslint.rules import all_rules

    Path("huge.py").write_text("x = [" + ", ".join(["1"] * (LARGE_TEXT // 3 + 10)) + "]\n")
    result = lint_file("huge.py", LintOptions(codes=frozenset(all_rules()), fix=True, write=True))
    assert result.notes and not result.diagnostics and not result.errors and not result.fixed


# --- lost edits and wrong reports ----------------------------------------------------------------

NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                       "source": MODEL.splitlines(keepends=True)}],
            "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def test_a_notebook_saved_while_it_is_fixed_is_not_overwritten(monkeypatch):
    data = json.dumps(NOTEBOOK, indent=1) + "\n"
    Path("rope.ipynb").write_text(data)
    saved = data.replace('"id": "c1"', '"id": "saved-by-the-user"')
    real = poslint.edge.cli.lint_notebook

    def lint_then_user_saves(path, data, options):
        outcome = real(path, data, options)
        Path(path).write_text(saved)  # the user saves the notebook while poslint works on it
        return outcome

    monkeypatch.setattr(poslint.edge.cli, "lint_notebook", lint_then_user_saves)
    result = run("--fix", "--no-cache", "rope.ipynb")
    assert Path("rope.ipynb").read_text() == saved
    assert "poslint: error: rope.ipynb: not fixed: the file changed on disk while it was being fixed" in result.stderr
    assert result.exit_code == 2


@pytest.mark.parametrize("unsafe", [(), ("--unsafe-fixes",)])
@pytest.mark.parametrize("output_format", FORMATS)
def test_after_a_failed_write_the_findings_are_those_on_disk(monkeypatch, output_format, unsafe):
    Path("model.py").write_text(MODEL)
    expected = run("--no-cache", "--output-format", output_format, *unsafe, "model.py")

    def full_disk(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(poslint.engine.linter, "write_atomic", full_disk)
    result = run("--fix", "--no-cache", "--output-format", output_format, *unsafe, "model.py")
    assert result.stdout == expected.stdout
    assert "poslint: error: model.py: not fixed: cannot write: No space left on device" in result.stderr
    assert "Fixed" not in result.stderr and result.exit_code == 2
    assert Path("model.py").read_text() == MODEL


def test_after_a_failed_notebook_write_the_findings_are_those_on_disk(monkeypatch):
    Path("rope.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    expected = run("--no-cache", "rope.ipynb")
    assert "rope.ipynb:cell 1:12:13: POS101" in expected.stdout

    def read_only_fs(path, data):
        raise OSError(errno.EROFS, "Read-only file system", path)

    monkeypatch.setattr(poslint.engine.linter, "write_atomic", read_only_fs)
    result = run("--fix", "--unsafe-fixes", "--no-cache", "rope.ipynb")
    assert result.stdout == run("--no-cache", "--unsafe-fixes", "rope.ipynb").stdout
    assert "rope.ipynb: not fixed: cannot write: Read-only file system" in result.stderr and result.exit_code == 2


def test_read_only_files_are_not_rewritten_even_by_root():
    Path("model.py").write_text(MODEL)
    os.chmod("model.py", 0o444)
    result = run("--fix", "--no-cache", "model.py")
    assert Path("model.py").read_text() == MODEL
    assert "model.py: not fixed: cannot write: Permission denied (the file is read-only)" in result.stderr
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS and result.exit_code == 2


def _fixable_tree(count: int) -> None:
    for i in range(count):
        Path(f"m{i:04d}.py").write_text(MODEL + "\n" * (i % 5) + f"# file {i}\n" + "value = 1\n" * 200)


def _signal_during_fix(signum: int, whole_group: bool):
    """Start a two-process --fix, signal it once it has written a file; the exit status and the
    files rewritten after the signal."""
    _fixable_tree(400)
    names = sorted(str(p) for p in Path(".").glob("m*.py"))
    # Signals at their defaults in the run, as in a terminal: a test runner started in the background
    # by a non-interactive shell ignores SIGINT, and children inherit that.
    process = subprocess.Popen([sys.executable, "-m", "poslint", "--fix", "-j", "2", "--no-cache", "."],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    written = {n: os.stat(n).st_mtime_ns for n in names}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if any(os.stat(n).st_mtime_ns != written[n] for n in names):
            break
        time.sleep(0.01)
    if process.poll() is not None:
        pytest.skip("the run finished before it could be interrupted")
    before = {n: Path(n).read_text() for n in names}
    (os.killpg if whole_group else os.kill)(process.pid, signum)
    stderr = process.communicate(timeout=120)[1]
    after = {n: Path(n).read_text() for n in names}
    changed = [n for n in names if before[n] != after[n]]
    for n in names:
        assert after[n].startswith((MODEL, MODEL_SAFE_FIXED))  # never torn
    return process.returncode, changed, stderr


@pytest.mark.parametrize("whole_group", [True, False])
def test_ctrl_c_during_a_multiprocess_fix_stops_at_once_with_130(whole_group):
    status, changed, stderr = _signal_during_fix(signal.SIGINT, whole_group)
    assert status == 130, stderr
    assert "poslint: interrupted" in stderr and "Traceback" not in stderr
    assert len(changed) <= 4  # the file each worker was writing (and one more each, by a race with the test)
    assert not list(Path(".").glob(".*.poslint-tmp"))


def test_sigterm_during_a_multiprocess_fix_leaves_no_temporary_file():
    status, changed, stderr = _signal_during_fix(signal.SIGTERM, whole_group=True)
    assert status == 128 + signal.SIGTERM, stderr
    assert len(changed) <= 4
    assert not list(Path(".").glob(".*.poslint-tmp"))


# --- writes outside the tree -----------------------------------------------------------------------

def test_a_cache_directory_that_is_a_symlink_is_not_used(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    old = outside / "poslint-0.0.1-aaaaaaaaaaaaaaaaaaaaaaaa.json"
    old.write_text('{"format":1,"index":{},"entries":{}}')
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(MODEL)
    (project / "cache").symlink_to(outside)
    os.chdir(project)
    result = run("--cache-dir", "cache", "model.py")
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS
    assert "poslint: warning: cache is a symbolic link, and the cache never follows one; running without " \
           "the cache" in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == [old.name]


def test_links_inside_the_cache_directory_are_never_followed(tmp_path):
    Path("model.py").write_text(MODEL)
    cache = tmp_path / "cache"
    cache.mkdir()
    target = tmp_path / "elsewhere" / "tag"
    (cache / "CACHEDIR.TAG").symlink_to(target)
    result = run("--cache-dir", str(cache), "model.py")
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS
    assert "CACHEDIR.TAG is a symbolic link" in result.stderr
    assert not target.parent.exists()
    assert sorted(p.name for p in cache.iterdir()) == ["CACHEDIR.TAG"]


def test_the_cache_deletes_only_old_cache_files_it_wrote(tmp_path):
    Path("model.py").write_text(MODEL)
    cache = tmp_path / "cache"
    cache.mkdir()
    mine = cache / "poslint-0.0.1-aaaaaaaaaaaaaaaaaaaaaaaa.json"
    mine.write_text('{"format":1,"index":{},"entries":{}}')
    theirs = cache / "poslint-0.0.1-bbbbbbbbbbbbbbbbbbbbbbbb.json"
    theirs.write_text("notes that someone keeps here\n")
    other = cache / "poslint-settings.json"
    other.write_text('{"format":1}')
    run("--cache-dir", str(cache), "model.py")
    names = {p.name for p in cache.iterdir()}
    assert mine.name not in names and theirs.name in names and other.name in names


# --- errors that should be clear errors -----------------------------------------------------------

def test_tool_that_is_not_a_table_is_passed_over():
    Path("pyproject.toml").write_text("tool = 5\n")
    Path("model.py").write_text(MODEL)
    result = run("--no-cache", "model.py")
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS and result.exit_code == 1
    assert "error" not in result.stderr


def test_a_cache_file_nested_too_deeply_is_ignored_with_a_warning(tmp_path):
    Path("model.py").write_text(MODEL)
    cache = tmp_path / "cache"
    run("--cache-dir", str(cache), "model.py")
    [cache_file] = cache.glob("poslint-*.json")
    cache_file.write_text("[" * 100_000 + "]" * 100_000)
    result = run("--cache-dir", str(cache), "model.py")
    assert findings(result.stdout, "model.py") == MODEL_FINDINGS and result.exit_code == 1
    assert "poslint: warning: cache " in result.stderr and "cannot be read" in result.stderr
    assert "internal error" not in result.stderr


def test_config_search_through_a_directory_without_search_permission_is_a_clear_error(monkeypatch, tmp_path):
    Path("locked").mkdir()
    Path("locked/model.py").write_text(MODEL)
    real = Path.is_file
    locked = tmp_path / "locked"

    def is_file(self):
        if self.parent == locked:  # what stat says in a directory without search (x) permission
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    result = run("--no-cache", "locked")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"poslint: error: cannot look for {locked / '.poslint.toml'}: Permission denied")
    assert "internal error" not in result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(), reason="needs root and setpriv")
def test_config_search_without_search_permission_as_another_user():
    as_nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    probe = subprocess.run([*as_nobody, "-c", "import click, libcst, poslint.edge.cli"], capture_output=True,
                           cwd="/", timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if probe.returncode != 0:  # a virtual environment in a private directory (a user's home, mktemp -d)
        pytest.skip("another user cannot run this Python: the permission check is covered by the monkeypatched test")
    top = Path(tempfile.mkdtemp(prefix="poslint-locked-"))
    os.chmod(top, 0o755)  # pytest's own temporary directories are private
    locked = top / "locked"
    locked.mkdir()
    (locked / "model.py").write_text(MODEL)
    os.chmod(locked, 0o644)  # readable, not searchable
    try:
        done = subprocess.run([*as_nobody, "-m", "poslint", "--no-cache", str(locked)],
                              capture_output=True, text=True, cwd="/", timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.chmod(locked, 0o755)
        shutil.rmtree(top)
    assert done.returncode == 2
    assert "poslint: error: cannot look for" in done.stderr and "Permission denied" in done.stderr
    assert "internal error" not in done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("output_format", ["concise", "json"])
def test_stdout_on_a_full_device_is_a_clear_error(output_format):
    Path("model.py").write_text(MODEL)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "--output-format", output_format,
                               "model.py"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2
    assert "poslint: error: cannot write to stdout: No space left on device" in done.stderr
    assert "internal error" not in done.stderr and "Exception ignored" not in done.stderr
    assert "Found 2 problems" in done.stderr


# --- smaller defects --------------------------------------------------------------------------------

def test_noqa_works_in_files_with_lone_cr_line_endings():
    text = MODEL.replace("dtype=self.inv_freq.dtype)", "dtype=self.inv_freq.dtype)  # noqa: POS101")
    Path("model.py").write_bytes(text.replace("\n", "\r").encode())
    result = run("--no-cache", "model.py")
    assert findings(result.stdout, "model.py") == ["13:32: POS102"]
    Path("model.py").write_bytes(("# poslint: noqa\n" + MODEL).replace("\n", "\r").encode())
    assert run("--no-cache", "model.py").exit_code == 0


def test_json_output_is_utf8_for_file_names_that_are_not():
    name = os.fsdecode(b"mod\xff.py")
    Path(name).write_text(MODEL)
    result = run("--no-cache", "--output-format", "json", ".")
    items = json.loads(result.stdout_bytes.decode("utf-8"))  # strict UTF-8
    assert {item["filename"] for item in items} == {"./mod\ufffd.py"} or \
        {item["filename"] for item in items} == {"mod\ufffd.py"}
    sarif = json.loads(run("--no-cache", "--output-format", "sarif", ".").stdout_bytes.decode("utf-8"))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert all("%FF" in uri for uri in uris)


def test_runs_that_lint_nothing_warn():
    Path("empty").mkdir()
    result = run("--no-cache", "empty")
    assert result.stderr == "poslint: warning: No Python files found\n" and result.exit_code == 0
    Path("model.py").write_text(MODEL)
    result = run("--no-cache", "--exclude", "*", ".")
    assert "poslint: warning: No Python files found" in result.stderr and result.exit_code == 0
    # pre-commit passing only excluded files stays quiet, as documented
    result = run("--no-cache", "--force-exclude", "--exclude", "model.py", "model.py")
    assert result.stderr == "" and result.exit_code == 0


@pytest.mark.parametrize("setting", ['select = [""]', 'ignore = ["P"]'])
def test_a_selection_that_matches_no_rule_is_an_error(setting):
    Path("pyproject.toml").write_text(f"[tool.poslint]\n{setting}\n")
    Path("model.py").write_text(MODEL)
    result = run("--no-cache", ".")
    assert result.exit_code == 2
    assert "poslint: error: the rule selection for " in result.stderr and "matches no rule" in result.stderr


def test_fix_in_a_file_with_lone_cr_line_endings():
    Path("model.py").write_bytes(MODEL.replace("\n", "\r").encode())
    result = run("--fix", "--no-cache", "model.py")
    assert result.exit_code == 1, result.stderr
    assert Path("model.py").read_bytes() == MODEL_SAFE_FIXED.replace("\n", "\r").encode()


def test_fix_in_a_file_with_form_feeds():
    text = MODEL.replace("\nclass", "\n\f\n\fclass").replace("\n    def forward", "\n\f    def forward")
    Path("model.py").write_text(text)
    result = run("--fix", "--no-cache", "model.py")
    assert result.exit_code == 1, result.stderr
    assert Path("model.py").read_text() == text.replace("dtype=self.inv_freq.dtype)", "dtype=torch.float32)")


def test_fix_with_8000_implicitly_concatenated_strings():
    strings = "\nTEXT = (\n" + "".join(f'    "part {i}"  # {i}\n' for i in range(8000)) + ")\n"
    Path("model.py").write_text(MODEL + strings)
    result = run("--fix", "--no-cache", "model.py")
    assert result.exit_code == 1, result.stderr
    assert Path("model.py").read_text() == MODEL_SAFE_FIXED + strings


def test_libcst_helpers_restore_the_text_around_what_they_add():
    cr = "x = 1\ry = 2\r"
    assert add_imports(cr, {"import torch"}) == "import torch\r\rx = 1\ry = 2\r"
    feeds = "\fx = 1\nif x:\n  \f  y = [\n1]\n"
    assert Normalised(feeds).text == "x = 1\nif x:\n  y = [\n1]\n"
    assert add_imports(feeds, {"import torch"}).endswith(feeds)
    strings = "s = (" + " ".join(['"a"'] * 8000) + ")\n"
    assert verify(strings) is None
    assert add_imports(strings, {"import torch"}) == "import torch\n\n" + strings
    assert "levels deep" in verify("y = " + " and ".join(["x"] * (LIBCST_MAX_DEPTH + 1)) + "\n")


def test_the_robustness_script_checks_the_crafted_inputs(tmp_path):
    module = sys.modules.get("robustness_run")
    if module is None:
        spec = importlib.util.spec_from_file_location("robustness_run", ROOT / "scripts" / "robustness_run.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["robustness_run"] = module
        spec.loader.exec_module(module)
    cases = module.crafted_inputs(tmp_path / "crafted")
    assert {"bool_chain_and_8000.py", "lone_cr.py", "form_feed.py", "strings_8000.py",
            "large_generated.py"} <= {p.name for p in cases}
    problems = [p for p in (module.crafted_problem(path, expected) for path, expected in cases.items()) if p]
    assert problems == []
