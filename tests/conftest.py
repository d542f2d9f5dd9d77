"""Shared test setup: the CI torch guard, ``--update-fixtures``, and throwaway rules for CLI tests."""

from __future__ import annotations

import ast
import os

import pytest

from poslint.core.diagnostics import Edit, Fix
from poslint.core.source import LineIndex
from poslint.rules.base import REGISTRY, Finding, Rule


def pytest_addoption(parser):
    parser.addoption("--update-fixtures", action="store_true", default=False,
                     help="Rewrite the expected tests/fixtures/*/checker/*.txt and codemod/*.out.py files "
                          "from the current output (review the diff before committing).")


def pytest_configure(config):
    if os.environ.get("CI") == "true":
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            pytest.exit(f"CI=true but torch cannot be imported ({exc}); tests that need torch would be skipped. "
                        "Install it with `pip install torch==2.13.0`.", returncode=3)


def _span(facts, node: ast.AST):
    index = LineIndex(facts.text)
    return (index.utf8_col_to_offset(node.lineno, node.col_offset),
            index.utf8_col_to_offset(node.end_lineno, node.end_col_offset))


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def _is_arange(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in ("torch.arange", "arange")


def _arange_calls(tree: ast.AST):
    return (node for node in ast.walk(tree) if _is_arange(node))


@pytest.fixture
def test_rules():
    """Register POS998 and POS999 for one test, then remove them.

    * POS999 reports ``arange(..., dtype=bfloat16)`` (safe fix) and ``dtype=float16`` (unsafe
      fix); the fix writes ``torch.float32`` and needs ``import torch``.
    * POS998 reports ``<arange call>.half()``; its safe fix drops the ``.half()``, an edit that
      contains POS999's, so both land only if the fixer re-runs.
    """

    class ArangeBf16(Rule):
        """Test rule: 16-bit arange."""

        code = "POS999"
        name = "test-arange-16bit"
        summary = "Test rule: arange with a 16-bit dtype"
        fix_availability = "always"

        def check(self, facts):
            for call in _arange_calls(facts.tree):
                for keyword in call.keywords:
                    kind = _name(keyword.value).split(".")[-1]
                    if keyword.arg == "dtype" and kind in ("bfloat16", "float16"):
                        start, end = _span(facts, keyword.value)
                        safety = "safe" if kind == "bfloat16" else "unsafe"
                        fix = Fix((Edit(start, end, "torch.float32"),), safety, "use float32", ("import torch",))
                        yield Finding(call, f"positions built in {kind}", fix)

    class HalfArange(Rule):
        """Test rule: ``.half()`` on an arange."""

        code = "POS998"
        name = "test-half-arange"
        summary = "Test rule: .half() applied to arange"
        fix_availability = "always"

        def check(self, facts):
            for node in ast.walk(facts.tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "half" and _is_arange(node.func.value)):
                    start, end = _span(facts, node)
                    inner_start, inner_end = _span(facts, node.func.value)
                    fix = Fix((Edit(start, end, facts.text[inner_start:inner_end]),), "safe", "drop .half()")
                    yield Finding(node, "positions cast to float16", fix)

    yield (ArangeBf16, HalfArange)
    for rule in (ArangeBf16, HalfArange):
        REGISTRY.pop(rule.code, None)


@pytest.fixture
def broken_rule():
    """Register POS997, whose fix deletes the last character of every ``arange`` call: a fix that breaks syntax."""

    class BreaksSyntax(Rule):
        """Test rule with a broken fix."""

        code = "POS997"
        name = "test-broken-fix"
        summary = "Test rule whose fix breaks the syntax"
        fix_availability = "always"

        def check(self, facts):
            for call in _arange_calls(facts.tree):
                start, end = _span(facts, call)
                yield Finding(call, "arange call", Fix((Edit(end - 1, end, ""),), "safe", "break it"))

    yield BreaksSyntax
    REGISTRY.pop(BreaksSyntax.code, None)
