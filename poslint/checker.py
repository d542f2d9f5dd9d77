"""Check one decoded source text: parse once, analyse once, run the selected rules.

A text that :func:`poslint.prefilter.may_have_findings` clears is not parsed or analysed: no rule
it covers can fire on it. With POS001 selected it is still checked for syntax errors, by
:func:`poslint.prefilter.syntax_ok` (CPython's parser without building ``ast`` objects), and
parsed with ``ast`` only when that fails, so that POS001 is reported exactly as without the
prefilter. ``check_text(..., prefilter=False)`` checks everything the slow way, for tests.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Collection, List

from poslint.diagnostics import Diagnostic
from poslint.rules import all_rules
from poslint.source import LineIndex

PARSE_ERROR = "POS001"


@dataclass
class CheckResult:
    diagnostics: List[Diagnostic] = field(default_factory=list)
    # One line per internal error: "path: POS101 raised KeyError: 'x'". The run goes on.
    internal_errors: List[str] = field(default_factory=list)


def parse_error(path: str, reason: str, line: int = 1, col: int = 1) -> Diagnostic:
    return Diagnostic(path, line, col, line, col, PARSE_ERROR, f"cannot parse: {reason}")


def check_text(text: str, path: str, codes: Collection[str], *, prefilter: bool = True) -> CheckResult:
    from poslint.analysis import analyze

    result = CheckResult()
    if prefilter and _cleared(text, path, codes):
        return result
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not our business
            tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        if PARSE_ERROR in codes:
            line = exc.lineno or 1
            col = exc.offset or 1
            result.diagnostics.append(parse_error(path, f"{exc.msg}", line, col))
        return result
    except (ValueError, RecursionError, MemoryError) as exc:
        if PARSE_ERROR in codes:
            reason = "source nests too deeply" if isinstance(exc, RecursionError) else str(exc) or type(exc).__name__
            result.diagnostics.append(parse_error(path, reason))
        return result

    index = LineIndex(text)
    rules = all_rules()
    active = [rules[c] for c in sorted(codes) if c in rules and c != PARSE_ERROR]
    if not active:
        return result
    try:
        facts = analyze(tree, text, index)
    except RecursionError:
        result.internal_errors.append(f"{path}: analysis: source nests too deeply to analyse")
        return result
    except Exception as exc:  # noqa: BLE001 - one file must not take down the run
        result.internal_errors.append(f"{path}: analysis raised {type(exc).__name__}: {exc}")
        return result

    for rule_cls in active:
        try:
            for finding in rule_cls().check(facts):
                result.diagnostics.append(_to_diagnostic(path, index, rule_cls.code, finding))
        except Exception as exc:  # noqa: BLE001
            result.internal_errors.append(f"{path}: {rule_cls.code} raised {type(exc).__name__}: {exc}")
    # A function analysed in several calling contexts can report the same place twice.
    unique = {}
    for diagnostic in result.diagnostics:
        unique.setdefault((diagnostic.line, diagnostic.col, diagnostic.code), diagnostic)
    result.diagnostics = sorted(unique.values(), key=lambda d: d.sort_key)
    return result


def _cleared(text: str, path: str, codes: Collection[str]) -> bool:
    """Whether the prefilter shows that nothing selected can be reported for ``text``."""
    from poslint.prefilter import COVERED_RULES, may_have_findings, syntax_ok

    if any(code != PARSE_ERROR and code not in COVERED_RULES for code in codes):
        return False  # a rule the prefilter's argument does not cover
    if may_have_findings(text):
        return False
    return PARSE_ERROR not in codes or syntax_ok(text, path)


def _to_diagnostic(path: str, index: LineIndex, code: str, finding) -> Diagnostic:
    node = finding.node
    start = index.utf8_col_to_offset(node.lineno, node.col_offset)
    end = index.utf8_col_to_offset(node.end_lineno, node.end_col_offset)
    line, col = index.offset_to_position(start)
    end_line, end_col = index.offset_to_position(end)
    return Diagnostic(path, line, col + 1, end_line, end_col + 1, code, finding.message, finding.fix)
