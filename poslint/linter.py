"""Lint (and optionally fix) one file: read, decode, check, apply noqa, fix, write."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Tuple

from poslint.checker import PARSE_ERROR, check_text, parse_error
from poslint.config import Config, per_file_ignored
from poslint.diagnostics import Diagnostic
from poslint.files import relative_to_root
from poslint.fixer import fix_text, unified_diff, write_atomic
from poslint.noqa import parse_suppressions
from poslint.source import SourceText, UndecodableSource


@dataclass
class LintOptions:
    codes: FrozenSet[str]
    config: Config = field(default_factory=Config)
    ignore_noqa: bool = False
    fix: bool = False  # compute fixes (``--fix`` or ``--diff``)
    write: bool = False  # write fixed files (``--fix`` without ``--diff``)
    unsafe_fixes: bool = False


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)  # what remains after any fixing
    errors: List[str] = field(default_factory=list)  # each forces exit status 2
    internal_errors: List[str] = field(default_factory=list)  # a rule or the analysis failed; exit 2
    fixed: int = 0
    diff: str = ""  # unified diff of the fixes, when fixing changed the text


def lint_file(path: str, options: LintOptions) -> FileResult:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileResult(path, errors=[f"{path}: cannot read: {exc.strerror or exc}"])
    result, source, new_text = lint_bytes(data, path, options)
    if options.write and new_text is not None:
        try:
            write_atomic(path, source.to_bytes(new_text))
        except UnicodeEncodeError as exc:
            result.errors.append(f"{path}: not fixed: the fixed text cannot be encoded as {source.encoding}: {exc}")
            result.fixed = 0
        except OSError as exc:
            result.errors.append(f"{path}: not fixed: cannot write: {exc.strerror or exc}")
            result.fixed = 0
    return result


def lint_bytes(data: bytes, path: str, options: LintOptions
               ) -> Tuple[FileResult, Optional[SourceText], Optional[str]]:
    """Return the result, the decoded source, and the fixed text when fixing changed it."""
    codes = options.codes
    if options.config.per_file_ignores:
        codes = codes - per_file_ignored(options.config, relative_to_root(path, options.config.root))
    try:
        source = SourceText.from_bytes(data)
    except UndecodableSource as exc:
        diagnostics = [parse_error(path, str(exc))] if PARSE_ERROR in codes else []
        return FileResult(path, diagnostics), None, None

    def check(text: str) -> Tuple[List[Diagnostic], List[str]]:
        checked = check_text(text, path, codes)
        found = checked.diagnostics
        if not options.ignore_noqa:
            found = parse_suppressions(text).filter(found)
        return found, checked.internal_errors

    first = check(source.text)
    if not options.fix:
        return FileResult(path, first[0], internal_errors=_unique(first[1])), source, None
    outcome = fix_text(source.text, check, options.unsafe_fixes, first)
    result = FileResult(path, outcome.diagnostics, internal_errors=_unique(outcome.internal_errors),
                        fixed=outcome.fixed)
    if outcome.error is not None:
        result.errors.append(f"{path}: not fixed: {outcome.error}")
    if outcome.text == source.text:
        return result, source, None
    result.diff = unified_diff(path, source.text, outcome.text)
    return result, source, outcome.text


def _unique(messages: List[str]) -> List[str]:
    return list(dict.fromkeys(messages))
