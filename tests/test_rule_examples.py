"""Each rule's inline VALID examples stay silent for it and its INVALID examples trigger it
(Fixit's convention), and every rule documents itself with ruff's headings."""

from __future__ import annotations

import textwrap

import pytest

from poslint.engine.checker import check_text
from poslint.rules import all_rules

RULES = [r for code, r in all_rules().items() if code != "POS001"]
HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety")


def _codes(code: str):
    result = check_text(textwrap.dedent(code), "example.py", set(all_rules()))
    assert not result.internal_errors
    return {d.code for d in result.diagnostics}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_examples(rule):
    assert rule.VALID and rule.INVALID
    for example in rule.VALID:
        assert rule.code not in _codes(example), example
    for example in rule.INVALID:
        assert rule.code in _codes(example), example


@pytest.mark.parametrize("rule", list(all_rules().values()), ids=lambda r: r.code)
def test_documentation(rule):
    page = rule.documentation()
    for heading in HEADINGS:
        assert heading in page, (rule.code, heading)
    assert rule.name == rule.name.lower() and " " not in rule.name
