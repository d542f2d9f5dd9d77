"""Check one decoded source text: parse once, analyse once, run the selected rules.

A text that :func:`poslint.engine.prefilter.may_have_findings` clears is not parsed or analysed: no rule
it covers can fire on it. With POS001 selected it is still checked for syntax errors, by
:func:`poslint.engine.prefilter.syntax_ok` (CPython's parser without building ``ast`` objects), and
parsed with ``ast`` only when that fails, so that POS001 is reported exactly as without the
prefilter. ``check_text(..., prefilter=False)`` checks everything the slow way, for tests.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from dataclasses import dataclass, field, replace
from typing import Collection, Iterator, List, Optional, Set, Tuple

from poslint.core.deep_stack import on_a_deep_stack
from poslint.core.diagnostics import Diagnostic, Fix
from poslint.core.source import LineIndex
from poslint.analysis.facts import ForeignNode, node_key
from poslint.analysis.object_model import definition_variants
from poslint.engine.imports import ProjectFiles
from poslint.engine.project import reduced_matmul_setting
from poslint.rules import all_rules
from poslint.rules.base import Finding

PARSE_ERROR = "POS001"


@dataclass
class CheckResult:
    diagnostics: List[Diagnostic] = field(default_factory=list)
    # One line per internal error: "path: POS101 raised KeyError: 'x'". The run goes on.
    internal_errors: List[str] = field(default_factory=list)
    # Files of other modules of the project that the result depends on (absolute paths).
    dependencies: List[str] = field(default_factory=list)


def parse_error(path: str, reason: str, line: int = 1, col: int = 1) -> Diagnostic:
    return Diagnostic(path, line, col, line, col, PARSE_ERROR, f"cannot parse: {reason}")


def check_text(text: str, path: str, codes: Collection[str], *, prefilter: bool = True,
               tree: Optional[ast.Module] = None, reduced_matmul: Optional[str] = None,
               project: Optional[ProjectFiles] = None) -> CheckResult:
    """Check ``text``; ``tree`` is its ``ast`` when the caller (flake8) has parsed it already.
    ``reduced_matmul`` says why float32 matmuls may run at reduced precision in the project (from
    :func:`poslint.engine.project.scan_reduced_matmul`, or the assume-tf32 option); a setting in
    ``text`` itself counts without it, and is the one named. With ``project``, what the file
    imports from the project's other modules is followed (see :mod:`poslint.engine.imports`)."""
    result = CheckResult()
    module, is_package = project.for_host(path, text) if project is not None else (None, False)
    try:
        if prefilter and _cleared(text, path, codes, project):
            return result
        return _checked(text, path, codes, tree, reduced_matmul, project, module, is_package, result)
    finally:
        if project is not None:
            result.dependencies = sorted(project.read)


def _checked(text: str, path: str, codes: Collection[str], tree: Optional[ast.Module], reduced_matmul: Optional[str],
             project: Optional[ProjectFiles], module: Optional[str], is_package: bool,
             result: CheckResult) -> CheckResult:
    if tree is None:
        tree = _parse(text, path, codes, result)
        if tree is None:
            return result

    index = LineIndex(text)
    rules = all_rules()
    active = [rules[c] for c in sorted(codes) if c in rules and c != PARSE_ERROR]
    if not active:
        return result
    own = reduced_matmul_setting(text)
    if own is not None:  # named the same way whoever calls: the CLI, flake8, an editor
        reduced_matmul = f"this file sets {own[1]} on line {own[0]}"
    where = (project, module, is_package)
    checked = _analyse(tree, text, index, active, path, reduced_matmul, where, deep=False)
    if checked is None:  # too deep for the default recursion limit: once more, on a deeper stack
        checked = on_a_deep_stack(lambda: _analyse(tree, text, index, active, path, reduced_matmul, where, deep=True))
    if checked is None:
        result.internal_errors.append(f"{path}: analysis: source nests too deeply to analyse")
        return result
    result.diagnostics, result.internal_errors = checked
    # A name defined more than once (a kernel's class and its pure-torch fallback under ``try``/
    # ``except ImportError``): each other definition is analysed in a variant of the module.
    for variant in definition_variants(tree):
        again = _analyse(variant, text, index, active, path, reduced_matmul, where, deep=False) or \
            on_a_deep_stack(lambda: _analyse(variant, text, index, active, path, reduced_matmul, where, deep=True))
        if again is not None:
            result.diagnostics += again[0]
            result.internal_errors += [e for e in again[1] if e not in result.internal_errors]
    # A function analysed in several calling contexts, or a site that feeds several products (one
    # frequency table for an image's rows and columns), reports the same place more than once:
    # one finding, whose fix must do what each report's fix does.
    unique = {}
    for diagnostic in result.diagnostics:
        place = (diagnostic.line, diagnostic.col, diagnostic.code)
        unique[place] = _merged(unique[place], diagnostic) if place in unique else diagnostic
    result.diagnostics = sorted(unique.values(), key=lambda d: d.sort_key)
    return result


def _merged(first: Diagnostic, again: Diagnostic) -> Diagnostic:
    """``first`` with a fix made of both reports' edits; no fix when either has none or their
    edits disagree about the same text."""
    if first.fix is None or again.fix is None:
        return replace(first, fix=None)
    if first.fix == again.fix:
        return first
    edits = sorted(set(first.fix.edits) | set(again.fix.edits), key=lambda e: (e.start, e.end, e.replacement))
    for before, after in zip(edits, edits[1:]):
        if after.start < before.end or (after.start == before.start and before.start == before.end == after.end):
            return replace(first, fix=None)  # overlapping edits, or two insertions at one place
    safety = "unsafe" if "unsafe" in (first.fix.safety, again.fix.safety) else first.fix.safety
    imports = tuple(dict.fromkeys(first.fix.imports + again.fix.imports))
    return replace(first, fix=Fix(tuple(edits), safety, first.fix.description, imports))


# Python 3.12's type parameters and type aliases (PEP 695): ``class Box[T]:``, ``def f[T](x: T)``,
# ``type Alias = ...``, which an older Python's parser rejects as invalid syntax.
_TYPE_PARAMETERS = re.compile(r"\s*(?:async\s+)?(?:class|def)\s+\w+\s*\[|\s*type\s+\w+\s*(?:\[.*\])?\s*=")


def _newer_grammar(text: str, line: int) -> str:
    """A note for a syntax error on a line that a newer Python reads: poslint parses with the
    grammar of the Python it runs under."""
    if sys.version_info >= (3, 12):
        return ""
    lines = text.splitlines()
    if 0 < line <= len(lines) and _TYPE_PARAMETERS.match(lines[line - 1]):
        return (f" (Python 3.12 type parameters; poslint reads the grammar of the Python it runs under, "
                f"{sys.version_info[0]}.{sys.version_info[1]}: run it under 3.12 or later for this file)")
    return ""


def _parse(text: str, path: str, codes: Collection[str], result: CheckResult) -> Optional[ast.Module]:
    """The tree of ``text``, or None with a POS001 finding in ``result``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not our business
            tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        if PARSE_ERROR in codes:
            line = exc.lineno or 1
            col = exc.offset or 1
            result.diagnostics.append(parse_error(path, f"{exc.msg}{_newer_grammar(text, line)}", line, col))
        return None
    except (ValueError, RecursionError, MemoryError) as exc:
        if PARSE_ERROR in codes:
            if isinstance(exc, RecursionError):
                reason = "source nests too deeply"
            elif isinstance(exc, MemoryError):  # the parser's own stack overflowed
                reason = "source too complex for Python's parser (it nests too deeply)"
            else:
                reason = str(exc) or type(exc).__name__
            result.diagnostics.append(parse_error(path, reason))
        return None
    return tree


def _analyse(tree: ast.Module, text: str, index: LineIndex, active, path: str, reduced_matmul: Optional[str],
             where: Tuple[Optional[ProjectFiles], Optional[str], bool],
             deep: bool) -> Optional[Tuple[List[Diagnostic], List[str]]]:
    """Run the analysis and the ``active`` rules: (findings, internal errors), or None if the
    recursion limit was hit in the analysis, or (unless ``deep``) in a rule. On a ``deep`` stack a
    rule that still recurses too deeply is an internal error of that rule alone."""
    from poslint.analysis import analyze

    diagnostics: List[Diagnostic] = []
    internal_errors: List[str] = []
    project, module, is_package = where
    try:
        facts = analyze(tree, text, index, project.project if project else None, module, is_package)
    except RecursionError:
        return None
    except Exception as exc:  # noqa: BLE001 - one file must not take down the run
        return diagnostics, [f"{path}: analysis raised {type(exc).__name__}: {exc}"]
    facts.reduced_matmul_precision = reduced_matmul
    for rule_cls in active:
        try:
            for finding in _located(rule_cls().check(facts), facts):
                diagnostics.append(_to_diagnostic(path, index, rule_cls.code, finding))
            for borrowed in facts.borrowed:
                for finding in _borrowed_findings(rule_cls, facts, borrowed):
                    diagnostics.append(_to_diagnostic(path, index, rule_cls.code, finding))
        except RecursionError as exc:
            if not deep:
                return None
            internal_errors.append(f"{path}: {rule_cls.code} raised {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001
            internal_errors.append(f"{path}: {rule_cls.code} raised {type(exc).__name__}: {exc}")
    return diagnostics, internal_errors


def _own_findings(rule_cls, own) -> Set[tuple]:
    """Where ``rule_cls`` reports in an imported module's own analysis: those findings are its own."""
    known = own.findings_by_rule
    if rule_cls.code not in known:
        known[rule_cls.code] = {node_key(f.node) for f in rule_cls().check(own)}
    return known[rule_cls.code]


def _borrowed_findings(rule_cls, facts, borrowed) -> Iterator[Finding]:
    """The findings in another module's code that a call of this file caused, where this file is
    where they show: at the call (or at this file's value that went into it), naming the other
    file and line, and without a fix (it would edit the other file). A finding that the other
    module's own analysis makes is its own, and is reported when that file is linted."""
    anchor_line = borrowed.anchor.lineno
    for finding in _located(rule_cls().check(borrowed.facts), borrowed.facts):
        if facts.holds(finding.node):
            yield Finding(finding.node, f"{finding.message} (in {borrowed.path}, reached by the call on line "
                                        f"{anchor_line})")
            continue
        # (at a node of the module itself, or of another that this file's calls ran: a value made
        # there, in code that called the module with it)
        owner = borrowed if borrowed.facts.holds(finding.node) else \
            next((other for other in facts.reached if other.facts.holds(finding.node)), borrowed)
        if node_key(finding.node) not in _own_findings(rule_cls, owner.own()):
            yield Finding(borrowed.anchor, f"{finding.message} (in {owner.path}:{finding.node.lineno}, "
                                           f"reached by this call)")


def _located(findings: Iterator[Finding], facts) -> Iterator[Finding]:
    """The findings at nodes of the module ``facts`` describes or of the linted file. One at a
    third module's node (a value made there and met here) is that module's to report; a rule that
    builds a fix on such a node stops there, as its fix could not edit the text at hand."""
    try:
        for finding in findings:
            # (a node of no tree, with no position, is a rule's bug: it goes on to be reported as one)
            if facts.locates(finding.node) or not hasattr(finding.node, "lineno"):
                yield finding
    except ForeignNode:
        return


def _cleared(text: str, path: str, codes: Collection[str], project: Optional[ProjectFiles] = None) -> bool:
    """Whether the prefilter shows that nothing selected can be reported for ``text`` (nor,
    with ``project``, through what it imports from the project)."""
    from poslint.engine.prefilter import COVERED_RULES, may_have_findings, syntax_ok

    if any(code != PARSE_ERROR and code not in COVERED_RULES for code in codes):
        return False  # a rule the prefilter's argument does not cover
    if may_have_findings(text):
        return False
    if project is not None and project.imports_may_matter(text):
        return False
    return PARSE_ERROR not in codes or syntax_ok(text, path)


def _to_diagnostic(path: str, index: LineIndex, code: str, finding) -> Diagnostic:
    node = finding.node
    start = index.utf8_col_to_offset(node.lineno, node.col_offset)
    end = index.utf8_col_to_offset(node.end_lineno, node.end_col_offset)
    line, col = index.offset_to_position(start)
    end_line, end_col = index.offset_to_position(end)
    return Diagnostic(path, line, col + 1, end_line, end_col + 1, code, finding.message, finding.fix)
