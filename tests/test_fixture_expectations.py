"""Every checker fixture states its expected findings in its header (``# expect: POS101 line 23
(why)`` or ``# expect: none``), written from the rule specs by hand. The linter must report
exactly those codes on exactly those lines: an oracle independent of the generated ``.txt``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from poslint.engine.linter import LintOptions, lint_bytes
from poslint.rules import all_rules

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*/checker/*.py") if "# expect:" in p.read_text("utf-8", "replace"))
EXPECT = re.compile(r"#\s*expect:\s*(POS\d+)\s+line\s+(\d+)")


def test_every_model_fixture_states_its_expectations():
    for family in ("rope", "alibi"):
        files = sorted((FIXTURES / family / "checker").glob("*.py"))
        assert files
        assert all(p in CASES for p in files), [p.name for p in files if p not in CASES]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_findings_match_the_stated_expectations(case: Path):
    text = case.read_text("utf-8")
    expected = {(code, int(line)) for code, line in EXPECT.findall(text)}
    if not expected:
        assert "# expect: none" in text
    result, _, _ = lint_bytes(case.read_bytes(), case.name, LintOptions(codes=frozenset(all_rules())))
    assert {(d.code, d.line) for d in result.diagnostics} == expected


@pytest.mark.parametrize("name, code, offered", [
    # x @ W.T with W a random projection sums over the coordinates: no elementwise rewrite
    ("tf32_learned_features.py", "POS107", False),
    # a cast back after cos/sin in another caller of another precision proves nothing for this one
    ("fourier_bands_vector.py", "POS101", False),
    # the product's own function casts cos/sin back: every caller keeps its dtype
    ("cos_sin_cast_in_function.py", "POS103", True),
    # coordinates cast to the buffer's dtype, cos/sin cast back only downstream in another module
    ("random_features_of_cast_coordinates.py", "POS103", False),
    # float32 coordinates @ the converted buffer would be an error: a matmul takes one dtype
    ("random_features_of_cast_coordinates.py", "POS101", False),
])
def test_fixes_offered_only_where_their_safety_holds(name, code, offered):
    case = FIXTURES / "rope" / "checker" / name
    result, _, _ = lint_bytes(case.read_bytes(), case.name, LintOptions(codes=frozenset(all_rules())))
    fixes = [d.fix for d in result.diagnostics if d.code == code]
    assert fixes and all((fix is not None) is offered for fix in fixes)
