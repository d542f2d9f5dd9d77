"""Apply fixes to a source text until nothing changes, then prove the result is still Python.

One pass takes the findings in order and applies every fix whose edits do not overlap an edit
already chosen in that pass; the text is then checked again and the next pass applies what was
skipped or newly found, up to :data:`MAX_PASSES`. The imports fixes rely on are added with
libcst's ``AddImportsVisitor`` after each pass. The final text must parse with :mod:`ast` and
round-trip through libcst; otherwise the fixes are discarded and the reason is reported.

A fix may change only its own spans. Its edits must lie within the text and must not overlap
one another, the text outside the edits of a pass must come out unchanged, and adding imports
may add or change import statements only. A fix that breaks one of these rules is refused with
all the others: the text is left as it was and the reason is reported.
"""

from __future__ import annotations

import ast
import difflib
import errno
import os
import re
import stat
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar

from poslint.core.diagnostics import Diagnostic, Edit, Fix

MAX_PASSES = 10
T = TypeVar("T")

# Given a text, return the findings that are reported for it (noqa already applied) and the
# internal errors met while checking it.
CheckFn = Callable[[str], Tuple[List[Diagnostic], List[str]]]


def applicable(fix: Optional[Fix], unsafe_fixes: bool) -> bool:
    """Whether ``--fix`` applies this fix with the given ``--unsafe-fixes`` setting."""
    return fix is not None and (fix.safety == "safe" or unsafe_fixes)


@dataclass
class FixOutcome:
    text: str  # the fixed text, or the original text when the fixes were discarded
    fixed: int  # fixes applied (0 when discarded)
    diagnostics: List[Diagnostic]  # findings left in ``text``
    internal_errors: List[str] = field(default_factory=list)
    error: Optional[str] = None  # why the fixes were discarded


def fix_text(text: str, check: CheckFn, unsafe_fixes: bool,
             first: Optional[Tuple[List[Diagnostic], List[str]]] = None) -> FixOutcome:
    """Fix ``text``; ``first`` is the result of ``check(text)`` when the caller already has it."""
    original = text
    diagnostics, errors = first if first is not None else check(text)
    internal: List[str] = list(errors)
    fixed = 0
    for _ in range(MAX_PASSES):
        chosen = [d for d in diagnostics if applicable(d.fix, unsafe_fixes)]
        if not chosen:
            break
        try:
            new_text, count, imports = _apply_pass(text, chosen)
        except RefusedFix as exc:
            return FixOutcome(original, 0, *_recheck(original, check, first, internal), error=str(exc))
        if imports:
            try:
                with_imports = add_imports(new_text, imports)
            except Exception as exc:  # noqa: BLE001 - a broken fix must not crash the run
                return FixOutcome(original, 0, *_recheck(original, check, first, internal),
                                  error=f"cannot add imports {sorted(imports)}: {_reason(exc)}")
            if not imports_only_changed(new_text, with_imports):
                return FixOutcome(original, 0, *_recheck(original, check, first, internal),
                                  error=f"adding imports {sorted(imports)} changed code that is not an import")
            new_text = with_imports
        if new_text == text:
            break
        text = new_text
        fixed += count
        diagnostics, errors = check(text)
        internal.extend(e for e in errors if e not in internal)
    else:
        if any(applicable(d.fix, unsafe_fixes) for d in diagnostics):
            return FixOutcome(original, 0, *_recheck(original, check, first, internal),
                              error=f"fixes did not settle after {MAX_PASSES} passes")
    if text != original:
        problem = verify(text)
        if problem is not None:
            return FixOutcome(original, 0, *_recheck(original, check, first, internal),
                              error=f"the fixed text {problem}")
    return FixOutcome(text, fixed, diagnostics, internal)


def _recheck(original: str, check: CheckFn, first, internal: List[str]):
    diagnostics, errors = first if first is not None else check(original)
    return diagnostics, internal + [e for e in errors if e not in internal]


class RefusedFix(Exception):
    """A fix that would change text outside its own spans; the message says which and why."""


def _apply_pass(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[str, int, Set[str]]:
    """Apply the fixes of ``diagnostics`` that do not overlap a fix taken before them."""
    taken: List[Edit] = []
    imports: Set[str] = set()
    count = 0
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        problem = edits_problem(text, fix.edits)
        if problem is not None:
            raise RefusedFix(f"the {diagnostic.code} fix at line {diagnostic.line} is refused: {problem}")
        if any(_overlaps(edit, other) for edit in fix.edits for other in taken):
            continue
        taken.extend(fix.edits)
        imports.update(fix.imports)
        count += 1
    taken.sort(key=lambda e: (e.start, e.end))
    new_text = _splice(text, taken)
    if not outside_unchanged(text, new_text, taken):
        raise RefusedFix("applying the fixes changed text outside their edits")
    return new_text, count, imports


def _splice(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with ``edits`` (sorted, disjoint) applied."""
    pieces: List[str] = []
    position = 0
    for edit in edits:
        pieces += [text[position:edit.start], edit.replacement]
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def edits_problem(text: str, edits: Sequence[Edit]) -> Optional[str]:
    """None if each edit is a span of ``text`` (``0 <= start <= end <= len(text)``) with a string
    replacement and no two of them overlap; otherwise what is wrong."""
    spans = []
    for edit in edits:
        if not isinstance(edit, Edit) or not isinstance(edit.replacement, str) or \
                not all(isinstance(x, int) and not isinstance(x, bool) for x in (edit.start, edit.end)):
            return f"{edit!r} is not an edit of text"
        if not 0 <= edit.start <= edit.end <= len(text):
            return f"the edit of offsets {edit.start}:{edit.end} is not a span of the text (0:{len(text)})"
        spans.append(edit)
    spans.sort(key=lambda e: (e.start, e.end))
    for a, b in zip(spans, spans[1:]):
        if _overlaps(a, b):
            return f"its edits at offsets {a.start}:{a.end} and {b.start}:{b.end} overlap"
    return None


def outside_unchanged(before: str, after: str, edits: Sequence[Edit]) -> bool:
    """Whether ``after`` is ``before`` with each of ``edits`` (sorted, disjoint) applied and
    nothing else changed: every stretch of ``before`` between edits is found, unchanged, in
    ``after``, each edit's replacement between them."""
    position = 0  # in before
    shifted = 0  # in after
    for edit in edits:
        gap = edit.start - position
        if after[shifted:shifted + gap] != before[position:edit.start]:
            return False
        shifted += gap
        if after[shifted:shifted + len(edit.replacement)] != edit.replacement:
            return False
        shifted += len(edit.replacement)
        position = edit.end
    return after[shifted:] == before[position:]


def imports_only_changed(before: str, after: str) -> bool:
    """Whether ``after`` differs from ``before`` only in module-level import statements and blank
    lines. If either text does not parse, :func:`verify` reports it later, so this says True."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _without_imports(before) == _without_imports(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True


def _without_imports(text: str) -> List[str]:
    lines = _lines(text)
    dropped: Set[int] = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            dropped.update(range(node.lineno - 1, node.end_lineno))
    return [line.rstrip("\r\n") for number, line in enumerate(lines)
            if number not in dropped and line.strip()]


def _overlaps(a: Edit, b: Edit) -> bool:
    # Two insertions at one offset conflict too: their order would be arbitrary.
    return (a.start < b.end and b.start < a.end) or a.start == b.start


def add_imports(text: str, imports: Set[str]) -> str:
    """Add each import statement (``"import torch"``, ``"from torch import nn"``) unless present."""
    import libcst  # imported when first needed: it takes longer to import than a cached run takes
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for statement in sorted(imports):
        node = ast.parse(statement).body
        if len(node) != 1 or not isinstance(node[0], (ast.Import, ast.ImportFrom)):
            raise ValueError(f"not a single import statement: {statement!r}")
        imp = node[0]
        if isinstance(imp, ast.Import):
            for alias in imp.names:
                AddImportsVisitor.add_needed_import(context, alias.name, asname=alias.asname)
        else:
            module = imp.module or ""
            for alias in imp.names:
                AddImportsVisitor.add_needed_import(context, module, alias.name, alias.asname, imp.level)
    return with_libcst(text, lambda normal: AddImportsVisitor(context).transform_module(
        libcst.parse_module(normal)).code)


class LibcstLimit(Exception):
    """A text that libcst cannot be trusted with (its native parser would crash on it); the message says why."""


# libcst's native parser recurses once per level of the tree it builds, where a boolean chain
# (``x and x and ...``) of n operands is n levels deep although ``ast`` keeps it flat. On the
# 8 MB main stack it overflows (a segmentation fault, not an exception) at about 7,500 levels,
# so deeper texts go straight to the deep stack, where it raises RecursionError at about 30,000.
# Deeper than LIBCST_MAX_DEPTH, libcst is not called at all.
LIBCST_MAIN_DEPTH = 2_000
LIBCST_MAX_DEPTH = 20_000
# libcst fails on about 4,000 implicitly concatenated strings (and recurses on a few hundred):
# a run this long is handed to it as one placeholder string and put back afterwards.
LONG_STRING_RUN = 200


# libcst takes about 4 KB and 60 us per node of ``ast``'s tree (a list of 200,000 numbers: 12 s,
# 800 MB), so a text with more nodes than this is not handed to it: a generated table could
# take tens of GB.
LIBCST_MAX_NODES = 250_000


def libcst_size(tree: ast.AST) -> Tuple[int, int]:
    """The number of nodes of ``tree``, and how deep libcst's tree for its text is (a boolean
    chain counts as nested pairs)."""
    deepest = nodes = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        deepest = max(deepest, depth)
        inner = depth + (len(node.values) - 1 if isinstance(node, ast.BoolOp) else 1)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return nodes, deepest


def with_libcst(text: str, transform: Callable[[str], str], tree: Optional[ast.AST] = None) -> str:
    """``transform(text)`` (libcst code that returns new text), run where libcst cannot crash,
    on a text that libcst accepts: lines ending in a lone CR and form feeds in indentation are
    normalised and very long runs of implicitly concatenated strings replaced by placeholders,
    and the result is restored. :class:`LibcstLimit` if the text is too deep for libcst,
    ``RecursionError`` if libcst still recursed too deeply, ``ValueError`` if the result cannot
    be restored. Texts too big for libcst's memory are refused (:data:`LIBCST_MAX_NODES`) too.
    ``tree`` is ``text`` already parsed with ``ast``, where the caller has it."""
    if tree is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    nodes, depth = libcst_size(tree)
    if nodes > LIBCST_MAX_NODES:
        raise LibcstLimit(f"it has {nodes} syntax nodes, more than the {LIBCST_MAX_NODES} that poslint gives "
                          f"libcst (which needs about 4 KB a node)")
    if depth > LIBCST_MAX_DEPTH:
        raise LibcstLimit(f"its syntax tree is {depth} levels deep for libcst (a long boolean chain?), "
                          f"more than the {LIBCST_MAX_DEPTH} that libcst can parse without crashing")
    normal = Normalised(text)
    if depth > LIBCST_MAIN_DEPTH:
        from poslint.core.deep_stack import on_a_deep_stack

        result = on_a_deep_stack(lambda: transform(normal.text))
        if result is None:
            raise RecursionError("libcst recursed too deeply")
    else:
        result = _deep_enough(lambda: transform(normal.text))
    return normal.restore(result)


class Normalised:
    """A text as libcst accepts it (``.text``), and the way back (:meth:`restore`)."""

    def __init__(self, original: str):
        self.placeholders: Dict[str, str] = {}
        text = self._hide_string_runs(original)
        self.newline = "\r" if "\r" in text and "\n" not in text else None
        self.lines = _lines(text)
        normal = [self._normal_line(line) for line in self.lines]
        self.normal_lines = normal if normal != self.lines else None
        self.text = "".join(normal)

    def _normal_line(self, line: str) -> str:
        if self.newline is not None and line.endswith("\r"):
            line = line[:-1] + "\n"
        indent = len(line) - len(line.lstrip(" \t\f"))
        if "\f" in line[:indent]:
            # CPython counts indentation from the last form feed; libcst does not accept one there.
            line = line[line.rindex("\f", 0, indent) + 1:]
        return line

    def _hide_string_runs(self, text: str) -> str:
        runs = _string_runs(text)
        if not runs:
            return text
        pieces, position = [], 0
        for number, (start, end) in enumerate(runs):
            placeholder = f"'poslint-string-run-{number}-{len(text)}'"
            if placeholder in text:  # never mistake the file's own text for a placeholder
                self.placeholders.clear()
                return text
            self.placeholders[placeholder] = text[start:end]
            pieces += [text[position:start], placeholder]
            position = end
        pieces.append(text[position:])
        return "".join(pieces)

    def restore(self, result: str) -> str:
        if self.normal_lines is not None:
            result = self._restore_lines(result)
        for placeholder, original in self.placeholders.items():
            if result.count(placeholder) != 1:
                raise ValueError("libcst changed the strings that were handed to it as a placeholder")
            result = result.replace(placeholder, original)
        return result

    def _restore_lines(self, result: str) -> str:
        """The original lines where ``result`` kept their normal form, and the lines libcst added or
        changed, with the file's line ending; a changed line must not be one that was normalised
        other than in its line ending."""
        out = _lines(result)
        matcher = difflib.SequenceMatcher(None, self.normal_lines, out, autojunk=False)
        pieces: List[str] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                pieces += self.lines[i1:i2]
                continue
            if any(line.rstrip("\r\n") != normal.rstrip("\r\n")
                   for line, normal in zip(self.lines[i1:i2], self.normal_lines[i1:i2])):
                raise ValueError("libcst changed a line that holds a form feed")
            pieces += [self._with_newline(line) for line in out[j1:j2]]
        return "".join(pieces)

    def _with_newline(self, line: str) -> str:
        if self.newline is not None and line.endswith("\n"):
            return line[:-1] + self.newline
        return line


def _deep_enough(function: Callable[[], T]) -> T:
    """``function()`` (a libcst call); if it recursed too deeply, again on a deep stack, as the
    analysis does (:func:`poslint.core.deep_stack.on_a_deep_stack`). ``RecursionError`` if even
    that is not enough."""
    try:
        return function()
    except RecursionError:
        from poslint.core.deep_stack import on_a_deep_stack

        result = on_a_deep_stack(function)
        if result is None:
            raise
        return result


def _string_runs(text: str) -> List[Tuple[int, int]]:
    """Offsets of each run of at least :data:`LONG_STRING_RUN` adjacent string literals (an
    implicit concatenation), found with :mod:`tokenize`; none if the text does not tokenize."""
    import io
    import tokenize

    if text.count("'") + text.count('"') < 2 * LONG_STRING_RUN:
        return []
    starts = [0]
    for line in _lines(text):
        starts.append(starts[-1] + len(line))
    runs: List[Tuple[int, int]] = []
    current: List[Tuple[int, int]] = []  # spans of the strings of the run being read
    nested = 0  # inside an f-string, which Python 3.12 tokenizes in parts
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            kind = tokenize.tok_name[token.type]
            span = (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1])
            if nested:
                nested += (kind == "FSTRING_START") - (kind == "FSTRING_END")
                if not nested:
                    current[-1] = (current[-1][0], span[1])
            elif kind in ("STRING", "FSTRING_START"):
                nested = int(kind == "FSTRING_START")
                current.append(span)
            elif kind not in ("NL", "COMMENT") or not current:
                if len(current) >= LONG_STRING_RUN:
                    runs.append((current[0][0], current[-1][1]))
                current = []
    except (tokenize.TokenError, SyntaxError):
        return []
    return runs


def verify(text: str) -> Optional[str]:
    """None if ``text`` parses with ast and round-trips through libcst; otherwise what is wrong."""
    import libcst

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"does not parse: {_reason(exc)}"
    try:
        if with_libcst(text, lambda normal: _round_trip(libcst, normal), tree) != text:
            raise _NoRoundTrip
    except _NoRoundTrip:
        if re.search(r"\r(?!\n)", text):
            return "does not round-trip through libcst, which does not support lines that end in a lone CR"
        return "does not round-trip through libcst"
    except RecursionError:
        return "nests too deeply for libcst to check it"
    except LibcstLimit as exc:
        return f"cannot be checked with libcst: {exc}"
    except Exception as exc:  # noqa: BLE001 - libcst raises its own ParserSyntaxError and others
        return f"does not parse with libcst: {_reason(exc)}"
    return None


class _NoRoundTrip(Exception):
    """libcst's code for a text is not the text."""


def _round_trip(libcst, text: str) -> str:
    if libcst.parse_module(text).code != text:
        raise _NoRoundTrip
    return text


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} (line {exc.lineno})"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff that marks a last line without a newline the way ``diff`` does."""
    lines = []
    for line in difflib.unified_diff(_lines(before), _lines(after), fromfile=f"a/{path}", tofile=f"b/{path}"):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _lines(text: str) -> List[str]:
    """Split after each newline (``\\n``, ``\\r\\n`` or a lone ``\\r``), keeping it."""
    return [part for part in re.split(r"(?<=\n)|(?<=\r)(?!\n)", text) if part]


def write_atomic(path: str, data: bytes) -> None:
    """Replace the file's contents atomically, keeping its mode bits (and its owner, where
    allowed); a symlink's target is written.

    The data goes to a temporary file in the same directory, which then replaces the file with
    one ``os.replace``: a reader sees the old or the new contents, never a mix. A file that the
    user may not write, or that no one may (read-only, even for root), is not replaced. The file
    gets a new inode, so a hard link to it keeps the old contents.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    if not os.access(target, os.W_OK) or not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        # Replacing the file needs only a writable directory; a read-only file still says no,
        # to root too (for whom os.access always says yes).
        raise PermissionError(errno.EACCES, "Permission denied (the file is read-only)", path)
    mode = stat.S_IMODE(info.st_mode)
    directory, name = os.path.split(target)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".poslint-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        made = os.stat(temp)
        if hasattr(os, "chown") and (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(temp, info.st_uid, info.st_gid)
            except OSError:
                pass  # only root may give a file away; the file then belongs to whoever fixed it
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
