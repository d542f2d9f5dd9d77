"""POS301's measurements (scripts/long_context_error.py): float32's own angle error at long
context, and the two fixes, checked at the sizes the rule and docs/precision.md quote."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("torch")
pytest.importorskip("mpmath")


def _script():
    spec = importlib.util.spec_from_file_location("long_context_error", ROOT / "scripts" / "long_context_error.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_float32_error_grows_as_the_rule_says_and_float64_removes_it():
    script = _script()
    from poslint.rules.pos301_long_context_float32_angles import FLOAT32_EPS, THRESHOLD_RAD

    short32, short64, _ = script.errors(131072, 10_000.0)
    long32, long64, reduced = script.errors(1 << 20, 500_000.0)
    # The rule's estimate, length * 2**-24, is within a factor 1.5 of the measured error.
    assert 131072 * FLOAT32_EPS / 1.5 < short32 < THRESHOLD_RAD  # 128k: silent
    assert THRESHOLD_RAD < (1 << 20) * FLOAT32_EPS / 1.5 < long32 < (1 << 20) * FLOAT32_EPS * 1.5  # 1M: reported
    assert short64 < 1e-9 and long64 < 1e-9  # the float64 table against mpmath
    assert long64 < reduced < long32  # range reduction helps, float64 more


def test_the_committed_table_is_what_the_script_measures_at_1m():
    script = _script()
    doc = (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")
    f32, _, red = script.errors(1 << 20, 1_000_000.0)
    assert f"| 1M | 1,000,000 | {f32:.3g} |" in doc
    assert f"| {red:.3g} |" in doc
