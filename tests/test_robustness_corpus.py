"""Robustness over real Python (issue 9): a deterministic sample of the running interpreter's
standard library, and every file of tests/realworld, are linted and fixed (in memory) with
every rule and the full analysis. Zero internal errors, zero tracebacks.

The whole standard library is ``python scripts/robustness_run.py``; this test runs the same
code on a sample, and prints the file counts in the test output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SAMPLE = 300


def _script():
    spec = importlib.util.spec_from_file_location("robustness_run", ROOT / "scripts" / "robustness_run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["robustness_run"] = module
    spec.loader.exec_module(module)
    return module


robustness_run = _script()


@pytest.fixture
def restore_prefilter():
    yield
    robustness_run.full_analysis(False)


def _check(label, files, capsys):
    summary = robustness_run.run(files, jobs=1, full=True)
    report = "\n".join(summary.lines(label))
    with capsys.disabled():
        print(f"\n[robustness] {report}")
    assert summary.files == len(files)
    assert not summary.exceptions, report
    assert not summary.internal_errors, report
    return summary


def test_standard_library_sample_has_no_internal_errors_or_tracebacks(capsys, restore_prefilter):
    files = robustness_run.stdlib_files()
    assert len(files) > 500, "the standard library was not found"
    chosen = robustness_run.sample(files, SAMPLE)
    assert len(chosen) == SAMPLE == len(set(chosen))
    summary = _check(f"standard library sample ({SAMPLE} of {len(files)} files)", chosen, capsys)
    assert summary.unparsable < SAMPLE // 10, "most of the standard library parses"
    assert not summary.refused, "\n".join(summary.refused)


def test_realworld_tree_has_no_internal_errors_or_tracebacks(capsys, restore_prefilter):
    files = robustness_run.realworld_files()
    assert len(files) >= 20
    summary = _check("tests/realworld", files, capsys)
    assert summary.unparsable == 0
    assert summary.fixed >= 10 and not summary.refused, "\n".join(summary.refused)
    assert {"POS101", "POS102", "POS103", "POS201"} <= set(summary.findings), summary.findings


def test_the_script_runs_and_reports(tmp_path):
    """``scripts/robustness_run.py`` as a command: extra paths, exit status 1 on an internal error."""
    import subprocess

    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "robustness_run.py"), "--no-stdlib", "--jobs", "1",
                           str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tests/realworld: " in proc.stdout and "extra paths: 1 files" in proc.stdout
    assert "0 internal errors; 0 tracebacks" in proc.stdout
