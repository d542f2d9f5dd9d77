"""`poslint verify`: table, exit codes, clear errors, --plot."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.runtime import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "runtime_models"
FIXED = f"{MODELS / 'llama_old__fixed.py'}:poslint_factory"
BUGGY = f"{MODELS / 'llama_old.py'}:poslint_factory"


def invoke(*args):
    return CliRunner().invoke(main, ["verify", *args])


def test_fixed_model_passes_with_one_row_per_scenario():
    result = invoke(FIXED)
    assert result.exit_code == 0, result.output
    rows = [line.split()[0] for line in result.output.splitlines()[3:]]
    assert rows == list(SCENARIOS)
    assert "FAIL" not in result.output


def test_buggy_model_exits_1_and_names_the_failures():
    result = invoke(BUGGY, "--scenario", "bf16", "--seq-len", "4096")
    assert result.exit_code == 1, result.output
    assert "4096 positions" in result.output
    # 769 distinct bf16 values among 0..4095 (PRECISION.md section 1): 3327 of 4095 repeat.
    assert "bf16: 81.2% of positions repeat the previous encoding" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing_file.py:poslint_factory"], "file not found: missing_file.py"),
        ([f"{MODELS / 'llama_old.py'}:nope"], "defines no 'nope'"),
        ([FIXED, "--scenario", "tf32"], "unknown scenario 'tf32'"),
    ],
)
def test_load_errors_exit_2_without_traceback(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_help_warns_that_it_runs_user_code():
    result = invoke("--help")
    assert result.exit_code == 0
    assert "IMPORTS AND RUNS" in result.output
    for name in SCENARIOS:
        assert name in result.output


def test_missing_torch_is_a_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    result = invoke(FIXED)
    assert result.exit_code == 2
    assert "pip install 'poslint[verify]'" in result.output


def test_missing_matplotlib_is_a_clear_message(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = invoke(FIXED, "--plot", str(tmp_path / "out.png"))
    assert result.exit_code == 2
    assert "--plot needs matplotlib" in result.output
    assert not (tmp_path / "out.png").exists()


class _Recorder:
    """Stands in for matplotlib: records what the plot draws."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self

        return record

    def subplots(self, *args, **kwargs):
        return self, self


def test_plot_draws_one_curve_per_scenario(monkeypatch, tmp_path):
    recorder = _Recorder()
    fake = types.ModuleType("matplotlib")
    fake.use = lambda backend: None
    fake.pyplot = recorder
    monkeypatch.setitem(sys.modules, "matplotlib", fake)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", recorder)
    out = tmp_path / "angles.png"
    result = invoke(BUGGY, "--seq-len", "4096", "--plot", str(out))
    assert result.exit_code == 1, result.output
    assert f"wrote {out}" in result.output
    curves = [c for c in recorder.calls if c[0] == "plot"]
    assert [c[2]["label"] for c in curves] == list(SCENARIOS)
    assert all(len(c[1][1]) == 4096 for c in curves)
    assert ("savefig", (str(out),), {"dpi": 110}) in recorder.calls


def test_new_user_entry_point():
    out = subprocess.run([sys.executable, "-m", "poslint", "verify", BUGGY, "--seq-len", "4096"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert "autocast-cuda-emulated" in out.stdout
    assert out.stderr == ""


def test_verify_doc_shows_the_current_before_and_after_output(tmp_path, monkeypatch):
    doc = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rope.py").write_text(
        (ROOT / "tests" / "fixtures" / "rope" / "checker" / "llama_hf_2023.py").read_text(encoding="utf-8"),
        encoding="utf-8")
    before = invoke("rope.py:poslint_factory")
    assert before.exit_code == 1
    fix = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "rope.py"])
    assert fix.exit_code == 0, fix.output
    after = invoke("rope.py:poslint_factory")
    assert after.exit_code == 0
    assert f"$ poslint verify rope.py:poslint_factory\n{before.output}```" in doc
    assert f"$ poslint verify rope.py:poslint_factory\n{after.output}```" in doc


def test_bf16_default_scenario_is_accepted(tmp_path):
    from click.testing import CliRunner

    from poslint.edge.cli import main

    target = Path(__file__).parent / "fixtures" / "rope" / "checker" / "default_dtype_positions.py"
    result = CliRunner().invoke(main, ["verify", str(target), "--scenario", "bf16-default", "--seq-len", "4096"])
    assert result.exit_code == 1, result.output  # runs, and shows the default-dtype bug
    assert "bf16-default" in result.output and "unknown scenario" not in result.output
