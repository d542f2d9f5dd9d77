"""Fixture-driven rule tests, in TorchFix's style.

* ``tests/fixtures/<family>/checker/NAME.py`` is checked with every rule (``ALL``); the findings,
  one ``line:col CODE message`` per line in report order, must equal ``NAME.txt`` (an empty
  file means no findings).
* ``tests/fixtures/<family>/codemod/NAME.in.py`` is fixed (safe fixes, plus unsafe ones when its
  first line contains ``# poslint-fixture: unsafe-fixes``) and must equal ``NAME.out.py``; a
  second fix pass must change nothing, and the output must parse.

``pytest --update-fixtures`` rewrites the expected files from the current output; read the diff.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from poslint.core.source import SourceText
from poslint.engine.linter import LintOptions, lint_bytes
from poslint.rules import all_rules

FIXTURES = Path(__file__).parent / "fixtures"
UNSAFE_MARKER = "# poslint-fixture: unsafe-fixes"

CHECKER_CASES = sorted(FIXTURES.glob("*/checker/*.py"))
CODEMOD_CASES = sorted(FIXTURES.glob("*/codemod/*.in.py"))


def _case_id(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def _expected(path: Path, actual: str, request) -> str:
    if request.config.getoption("--update-fixtures"):
        path.write_bytes(actual.encode("utf-8"))
        return actual
    if not path.exists():
        pytest.fail(f"{path} is missing; run `python -m pytest --update-fixtures` and review it")
    return path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("case", CHECKER_CASES, ids=_case_id)
def test_checker_fixture(case: Path, request):
    result, _, _ = lint_bytes(case.read_bytes(), case.name, LintOptions(codes=frozenset(all_rules())))
    assert not result.internal_errors
    findings = sorted(result.diagnostics, key=lambda d: d.sort_key)
    actual = "".join(f"{d.line}:{d.col} {d.code} {d.message}\n" for d in findings)
    assert actual == _expected(case.with_suffix(".txt"), actual, request)


def _fix(data: bytes, name: str, unsafe: bool):
    options = LintOptions(codes=frozenset(all_rules()), fix=True, unsafe_fixes=unsafe)
    result, source, new_text = lint_bytes(data, name, options)
    assert not result.errors and not result.internal_errors, result.errors + result.internal_errors
    return source, (new_text if new_text is not None else source.text), new_text is not None


@pytest.mark.parametrize("case", CODEMOD_CASES, ids=_case_id)
def test_codemod_fixture(case: Path, request):
    data = case.read_bytes()
    unsafe = UNSAFE_MARKER in data.split(b"\n", 1)[0].decode("utf-8", "replace")
    source, fixed, _ = _fix(data, case.name, unsafe)
    out_path = case.with_name(case.name[: -len(".in.py")] + ".out.py")
    if request.config.getoption("--update-fixtures"):
        out_path.write_bytes(source.to_bytes(fixed))
    if not out_path.exists():
        pytest.fail(f"{out_path} is missing; run `python -m pytest --update-fixtures` and review it")
    assert fixed == SourceText.from_bytes(out_path.read_bytes()).text

    _, again, changed = _fix(source.to_bytes(fixed), case.name, unsafe)
    assert not changed, f"a second fix pass changed {case.name}:\n{again}"
    ast.parse(fixed)
