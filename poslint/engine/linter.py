"""Lint (and optionally fix) one file: read, decode, check, apply noqa, fix, write."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

from poslint.core.diagnostics import Diagnostic, Edit
from poslint.core.source import SourceText, UndecodableSource
from poslint.engine.checker import PARSE_ERROR, check_text, parse_error
from poslint.engine.config import Config, per_file_ignored
from poslint.engine.files import check_regular, open_nonblocking, relative_to_root
from poslint.engine.imports import project_files
from poslint.engine.noqa import parse_suppressions
from poslint.fix.fixer import _overlaps, applicable, fix_text, unified_diff, write_atomic
from poslint.fix.locations import SourceMap


@dataclass
class LintOptions:
    codes: FrozenSet[str]
    config: Config = field(default_factory=Config)
    ignore_noqa: bool = False
    fix: bool = False  # compute fixes (``--fix`` or ``--diff``)
    write: bool = False  # write fixed files (``--fix`` without ``--diff``)
    unsafe_fixes: bool = False
    # Linters for files that are not Python source, by suffix: ``{".ipynb": lint_notebook}``.
    # The edge passes them in, so that the engine never imports an integration. Each takes
    # ``(path, data, options)`` and returns ``(FileResult, fixed bytes or None)``.
    handlers: Dict[str, Callable] = field(default_factory=dict)
    # Codes whose fixes are never applied (``--unfixable``): their findings lose the fix when fixing.
    unfixable: FrozenSet[str] = frozenset()
    # Why float32 matmuls may run at reduced precision in this run's project (a setting found by
    # poslint.engine.project.scan_reduced_matmul, or assume-tf32); None: only a file's own text says.
    reduced_matmul: Optional[str] = None
    # Where first-party modules live, for following imports into the project's other modules
    # (see poslint.engine.imports); None: each file is analysed on its own.
    src: Optional[Tuple[str, ...]] = None


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)  # what remains after any fixing
    errors: List[str] = field(default_factory=list)  # each forces exit status 2
    internal_errors: List[str] = field(default_factory=list)  # a rule or the analysis failed; exit 2
    fixed: int = 0
    diff: str = ""  # unified diff of the fixes, when fixing changed the text
    # Positions in the text the diagnostics refer to (after fixing), for the output formats.
    source_map: Optional[SourceMap] = None
    fixed_codes: Dict[str, int] = field(default_factory=dict)  # fixes applied, by rule code (--show-fixes)
    notes: List[str] = field(default_factory=list)  # what was skipped in this file, and why
    # Other files of the project the findings depend on (absolute paths), for the cache.
    dependencies: List[str] = field(default_factory=list)


# A file longer than this (in characters) is not parsed at all when the prefilter shows that no
# rule can fire in it: CPython's syntax check alone takes about 0.6 s and 250 MB per MB of a
# generated list. (What libcst may be given when fixing is bounded in poslint.fix.fixer.)
LARGE_TEXT = 4 * 1024 * 1024


def lint_file(path: str, options: LintOptions) -> FileResult:
    """Lint (and fix) one file. Never raises: a failure inside poslint becomes an internal error
    of this file, with the findings that could still be made, and the run goes on."""
    try:
        data = _read(path)
    except OSError as exc:
        return FileResult(path, errors=[f"{path}: cannot read: {exc.strerror or exc}"])
    handler = next((h for suffix, h in options.handlers.items() if path.endswith(suffix)), None)
    if handler is not None:
        return _lint_other(handler, path, data, options)
    try:
        result, source, new_text = lint_bytes(data, path, options)
    except Exception as exc:  # noqa: BLE001 - one file must not take down the run
        failure = f"{path}: {'fixing' if options.fix else 'linting'} raised {type(exc).__name__}: {exc}"
        if not options.fix:
            return FileResult(path, internal_errors=[failure])
        try:  # report the findings without fixing
            result, _, _ = lint_bytes(data, path, _no_fix(options))
        except Exception:  # noqa: BLE001
            result = FileResult(path)
        result.internal_errors.append(failure)
        return result
    if options.write and new_text is not None:
        problem = _write_checked(path, data, lambda: source.to_bytes(new_text), source)
        if problem is not None:
            _report_on_disk(path, problem, options, result, lambda data: lint_bytes(data, path, _no_fix(options))[0])
    return result


def _no_fix(options: LintOptions) -> LintOptions:
    return replace(options, fix=False, write=False)


def _read(path: str) -> bytes:
    """The file's bytes; a named pipe or a device is refused without blocking (see files.read_source)."""
    with open(path, "rb", opener=open_nonblocking) as handle:
        check_regular(handle.fileno(), path)
        return handle.read()


def _write_checked(path: str, data: bytes, new_bytes: Callable[[], bytes],
                   source: Optional[SourceText] = None) -> Optional[str]:
    """Write the fixed file over the very bytes it was made from (``data``); None if it was
    written (or another poslint wrote the same meanwhile), else why not."""
    try:
        new_data = new_bytes()
        if source is not None and source.to_bytes(source.text) != data:
            return (f"its bytes do not survive decoding and encoding as {source.encoding}, so writing it "
                    f"would change more than the fixes")
        current = _read(path)
        if current == new_data:
            return None  # fixed meanwhile, by another poslint --fix
        if current != data:
            return "the file changed on disk while it was being fixed; run poslint again"
        write_atomic(path, new_data)
    except UnicodeEncodeError as exc:
        return f"the fixed text cannot be encoded as {source.encoding if source else 'UTF-8'}: {exc}"
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None


def _report_on_disk(path: str, problem: str, options: LintOptions, result: FileResult,
                    lint_data: Callable[[bytes], FileResult]) -> None:
    """A fix that was not written: ``result`` becomes the findings of the file as it is on disk,
    with the error, instead of those of a fixed text that nobody can see."""
    error = f"{path}: not fixed: {problem}"
    try:
        on_disk = lint_data(_read(path))
    except OSError as exc:
        on_disk = FileResult(path, errors=[f"{path}: cannot read: {exc.strerror or exc}"])
    except Exception as exc:  # noqa: BLE001 - one file must not take down the run
        on_disk = FileResult(path, internal_errors=[f"{path}: linting raised {type(exc).__name__}: {exc}"])
    result.diagnostics, result.source_map, result.notes = on_disk.diagnostics, on_disk.source_map, on_disk.notes
    result.internal_errors = _unique(result.internal_errors + on_disk.internal_errors)
    result.errors = _unique(result.errors + [error] + on_disk.errors)
    result.fixed, result.fixed_codes, result.diff = 0, {}, ""


def _lint_other(handler: Callable, path: str, data: bytes, options: LintOptions) -> FileResult:
    kind = path.rsplit(".", 1)[-1]

    def lint_data(data: bytes, options: LintOptions):
        try:
            return handler(path, data, options)
        except RecursionError:
            return FileResult(path, internal_errors=[f"{path}: {kind}: nests too deeply to analyse"]), None
        except Exception as exc:  # noqa: BLE001 - one file must not take down the run
            return FileResult(path, internal_errors=[f"{path}: {kind}: {type(exc).__name__}: {exc}"]), None

    result, new_data = lint_data(data, options)
    if options.write and new_data is not None:
        problem = _write_checked(path, data, lambda: new_data)
        if problem is not None:
            _report_on_disk(path, problem, options, result, lambda data: lint_data(data, _no_fix(options))[0])
    return result


def file_codes(path: str, options: LintOptions) -> FrozenSet[str]:
    """The rules that apply to ``path``: the selection less its ``per-file-ignores``."""
    codes = options.codes
    if options.config.per_file_ignores:
        codes = codes - per_file_ignored(options.config, relative_to_root(path, options.config.root))
    return codes


def lint_bytes(data: bytes, path: str, options: LintOptions
               ) -> Tuple[FileResult, Optional[SourceText], Optional[str]]:
    """Return the result, the decoded source, and the fixed text when fixing changed it."""
    codes = file_codes(path, options)
    try:
        source = SourceText.from_bytes(data)
    except UndecodableSource as exc:
        diagnostics = [parse_error(path, str(exc))] if PARSE_ERROR in codes else []
        return FileResult(path, diagnostics), None, None
    result, new_text = lint_text(source.text, path, options, codes)
    return result, source, new_text


def lint_text(text: str, path: str, options: LintOptions, codes: FrozenSet[str]
              ) -> Tuple[FileResult, Optional[str]]:
    """Check (and with ``options.fix``, fix) a decoded text; return the result and the fixed text
    when fixing changed it. ``result.source_map`` maps the text the diagnostics refer to."""

    passes: List[List[Diagnostic]] = []  # what each check found, in order, to tell which fixes were taken
    project = project_files(options.src, str(options.config.root)) if options.src is not None else None
    dependencies: set = set()

    def check(text: str) -> Tuple[List[Diagnostic], List[str]]:
        checked = check_text(text, path, codes, reduced_matmul=options.reduced_matmul, project=project)
        dependencies.update(checked.dependencies)
        found = checked.diagnostics
        if found and not options.ignore_noqa:
            found = parse_suppressions(text).filter(found)
        if options.fix and options.unfixable:
            found = [replace(d, fix=None) if d.code in options.unfixable else d for d in found]
        passes.append(found)
        return found, checked.internal_errors

    if len(text) > LARGE_TEXT:
        large = _large_text(text, path, codes)
        if large is not None:
            return large, None
    first = check(text)
    if not options.fix:
        return FileResult(path, first[0], internal_errors=_unique(first[1]), source_map=SourceMap(text),
                          dependencies=sorted(dependencies)), None
    outcome = fix_text(text, check, options.unsafe_fixes, first)
    result = FileResult(path, outcome.diagnostics, internal_errors=_unique(outcome.internal_errors),
                        fixed=outcome.fixed, source_map=SourceMap(outcome.text), dependencies=sorted(dependencies))
    if outcome.error is not None:
        result.errors.append(f"{path}: not fixed: {outcome.error}")
    if outcome.text == text:
        return result, None
    result.fixed_codes = _fixed_codes(passes[:-1], options.unsafe_fixes, outcome.fixed)
    result.diff = unified_diff(path, text, outcome.text)
    return result, outcome.text


def _large_text(text: str, path: str, codes: FrozenSet[str]) -> Optional[FileResult]:
    """The result for a text over :data:`LARGE_TEXT` in which nothing can be reported but a
    syntax error: skipped, with a note. None if a rule may fire in it: it is checked as usual."""
    from poslint.engine.prefilter import COVERED_RULES, may_have_findings

    if any(code != PARSE_ERROR and code not in COVERED_RULES for code in codes) or may_have_findings(text):
        return None
    return FileResult(path, source_map=SourceMap(text), notes=[
        f"{path}: not checked for syntax errors: it is {len(text) / 2 ** 20:.1f} MB, more than the "
        f"{LARGE_TEXT // 2 ** 20} MB poslint parses, and holds nothing that the rules look for"])


def _fixed_codes(passes: List[List[Diagnostic]], unsafe_fixes: bool, fixed: int) -> Dict[str, int]:
    """The codes of the fixes taken in each pass, chosen as :func:`poslint.fix.fixer.fix_text` does."""
    counts: Counter = Counter()
    for found in passes:
        taken: List[Edit] = []
        for d in found:
            if applicable(d.fix, unsafe_fixes) and not any(_overlaps(e, t) for e in d.fix.edits for t in taken):
                taken.extend(d.fix.edits)
                counts[d.code] += 1
    return dict(counts) if sum(counts.values()) == fixed else {}


def _unique(messages: List[str]) -> List[str]:
    return list(dict.fromkeys(messages))
