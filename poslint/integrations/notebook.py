"""Jupyter notebooks (``.ipynb``): lint the code cells, and write fixes back without touching anything else.

**Locations.** A finding in a notebook is reported as ``path:cell N:line:col``, as ruff does:
``N`` is the 1-based position of the cell among all the cells of the notebook (markdown and raw
cells count, so ``cell 3`` is the third cell from the top), and ``line``/``col`` are 1-based
within that cell's source.

**How cells are checked.** The code cells of a Python notebook (nbformat 4) are joined into one
virtual module, in order, so that a class defined in one cell and converted to bfloat16 in a
later one is seen as one program. Each cell starts with a marker comment line
(``# poslint-cell-boundary N``) that maps positions back to cells and that fixes never touch.

**IPython syntax.** A cell that parses as Python is used as it is. Otherwise its IPython lines
are masked with placeholders of the same length, so that the columns of everything else stay
right: line magics (``%time``, or ``pip install x`` that automagic runs as ``%pip``), shell
escapes (``!ls``), help (``?obj``, ``obj?``), and
assignments from them (``files = !ls``) become the statement ``0`` padded with spaces, and the
continuation lines of such a line (after a trailing ``\\``) become comments. A cell that starts
with a cell magic is checked only for the magics whose body is Python (``%%time``,
``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug``); ``%%bash``, ``%%writefile`` and the others
are skipped. A cell that still does not parse is reported as POS001 and left out; the other
cells are still checked. Notebooks whose kernel language is not Python are skipped.

**Fixes.** ``--fix`` re-serialises only the ``source`` of the cells whose text changed, and
splices it into the original JSON text: outputs, metadata, key order, indentation, line endings
and every other byte stay as they were. The masked lines are put back; a fix that would change
one is refused. The result is parsed again and compared with what was intended before it is
written.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from json.decoder import scanstring
from typing import Dict, List, Optional, Sequence, Tuple

from poslint.core.diagnostics import Diagnostic, Edit
from poslint.core.source import LineIndex
from poslint.engine.checker import PARSE_ERROR
from poslint.engine.noqa import parse_suppressions
from poslint.fix.locations import Position, SourceMap, apply_edits

MARKER = "# poslint-cell-boundary"
_MARKER_LINE = re.compile(r"^# poslint-cell-boundary (\d+)\n", re.MULTILINE)

# Cell magics whose body is Python code.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_HELP = re.compile(r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:\(\))?\?{1,2}")
# Line magics and shell aliases that IPython's automagic (on by default) runs without their ``%``:
# ``pip install -q x`` in a cell is ``%pip install -q x``.
AUTOMAGICS = frozenset({
    "pip", "conda", "mamba", "micromamba", "cd", "pwd", "ls", "ll", "cat", "cp", "mv", "rm", "rmdir", "mkdir",
    "env", "set_env", "load_ext", "reload_ext", "unload_ext", "matplotlib", "pylab", "time", "timeit", "run",
    "who", "whos", "history", "reset", "config", "autoreload", "aimport", "precision", "pdb", "debug", "prun",
    "load", "sx", "system", "alias", "unalias", "pushd", "popd", "dhist", "bookmark", "clear", "less", "more", "man",
})
_FIRST_WORD = re.compile(r"([A-Za-z_]\w*)\s")
_ASSIGN_MAGIC = re.compile(r"[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_WS = re.compile(r"[ \t\n\r]*")


class NotebookError(Exception):
    """The file is not a notebook that poslint can read."""


@dataclass(frozen=True)
class NotebookDiagnostic(Diagnostic):
    """A finding in a notebook: ``line``/``col`` are within the 1-based ``cell``."""

    cell: Optional[int] = None
    # The row of the virtual module (all code cells joined) where the finding starts.
    virtual_line: Optional[int] = field(default=None, compare=False)

    @property
    def sort_key(self):
        return (self.path, self.cell or 0, self.line, self.col, self.code, self.message)


# --- IPython masking --------------------------------------------------------------------------

def _parses(text: str) -> Optional[SyntaxError]:
    """None if ``text`` parses as Python; otherwise the error (other failures become a SyntaxError)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = "source nests too deeply" if isinstance(exc, RecursionError) else str(exc) or type(exc).__name__
        return SyntaxError(reason, ("", 1, 1, ""))
    return None


def _split_eol(line: str) -> Tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def is_ipython_line(body: str) -> bool:
    """True for a line magic, shell escape, help request, or an assignment from a magic or escape."""
    stripped = body.strip()
    if not stripped:
        return False
    if stripped[0] in "%!?":
        return True
    if _HELP.fullmatch(stripped) or _ASSIGN_MAGIC.match(stripped):
        return True
    # An automagic: a magic's name, then words that are no Python statement (``pip install x``,
    # ``cd ..``; ``ls - x`` is a subtraction).
    first = _FIRST_WORD.match(stripped)
    return bool(first and first.group(1) in AUTOMAGICS and _parses(stripped) is not None)


def _placeholder(body: str, statement: bool) -> str:
    indent = body[: len(body) - len(body.lstrip())]
    rest = len(body) - len(indent)
    return indent + ("0" if statement else "#") + " " * (rest - 1)


def mask_ipython(source: str) -> Optional[Tuple[str, Dict[int, str]]]:
    """Return the cell's text with IPython lines masked, and ``{line index: original line}`` of
    the masked lines; or None when the cell is not Python (a cell magic such as ``%%bash``)."""
    lines = source.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = re.match(r"%%(\w+)", lines[first].lstrip())
        if name is None or name.group(1) not in PYTHON_CELL_MAGICS:
            return None
    if _parses(source) is None:
        return source, {}
    out = list(lines)
    masked: Dict[int, str] = {}
    continuation = False
    for i, line in enumerate(lines):
        body, eol = _split_eol(line)
        if continuation or is_ipython_line(body):
            out[i] = _placeholder(body, statement=not continuation) + eol if body.strip() else line
            masked[i] = line
            continuation = body.rstrip().endswith("\\")
    return "".join(out), masked


def restore_masked(old: str, new: str, masked: Dict[int, str]) -> Tuple[str, Dict[int, str]]:
    """Put the masked lines of ``old`` back into ``new`` (``old`` after fixes).

    Returns the restored text and where the masked lines are in ``new``. Raises ValueError if a
    fix changed a masked line.
    """
    if not masked:
        return new, {}
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    where: Dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            where[block.a + k] = block.b + k
    moved: Dict[int, str] = {}
    for index, original in masked.items():
        if index not in where:
            raise ValueError(f"a fix would change the IPython line {original.rstrip()!r}")
        moved[where[index]] = original
        new_lines[where[index]] = original
    return "".join(new_lines), moved


# --- reading the JSON with positions ----------------------------------------------------------

def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _value_end(text: str, i: int, decoder=json.JSONDecoder()) -> int:
    return decoder.raw_decode(text, i)[1]


@dataclass
class SourceSpan:
    start: int  # of the JSON value of the cell's "source", in the file's text
    end: int
    items: List[int] = field(default_factory=list)  # start of each string, when it is a list


def source_spans(text: str) -> Dict[int, SourceSpan]:
    """Where the ``source`` value of each cell (by 0-based index) lies in the notebook's JSON text."""
    spans: Dict[int, SourceSpan] = {}
    i = _skip(text, 0)
    if text[i:i + 1] != "{":
        raise NotebookError("the top level is not a JSON object")

    def members(i: int):
        """Yield (key, value start) for each member of the object at ``i``; return the end."""
        i = _skip(text, i + 1)
        if text[i] == "}":
            return i + 1
        while True:
            key, i = scanstring(text, i + 1)
            i = _skip(text, i)
            i = _skip(text, i + 1)  # the ':'
            end = yield key, i
            i = _skip(text, end)
            if text[i] == "}":
                return i + 1
            i = _skip(text, i + 1)  # the ','

    def walk_object(i: int, on_member) -> int:
        gen = members(i)
        try:
            key, start = next(gen)
            while True:
                end = on_member(key, start)
                key, start = gen.send(end)
        except StopIteration as stop:
            return stop.value

    def walk_array(i: int, on_item) -> int:
        i = _skip(text, i + 1)
        index = 0
        if text[i] == "]":
            return i + 1
        while True:
            i = _skip(text, on_item(index, i))
            index += 1
            if text[i] == "]":
                return i + 1
            i = _skip(text, i + 1)

    def cell_member(cell_index: int):
        def on_member(key: str, start: int) -> int:
            end = _value_end(text, start)
            if key == "source":
                span = SourceSpan(start, end)
                if text[start] == "[":
                    walk_array(start, lambda _, j: (span.items.append(j), _value_end(text, j))[1])
                spans[cell_index] = span
            return end
        return on_member

    def top_member(key: str, start: int) -> int:
        if key == "cells" and text[start] == "[":
            return walk_array(start, lambda index, j: walk_object(j, cell_member(index))
                              if text[j] == "{" else _value_end(text, j))
        return _value_end(text, start)

    walk_object(i, top_member)
    return spans


def _source_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise NotebookError("a cell's source is neither a string nor a list of strings")


def serialise_source(new: str, old_json: str, ensure_ascii: bool) -> str:
    """The JSON text of the source ``new``, in the style of ``old_json`` (the old value's text)."""
    if not old_json.startswith("["):
        return json.dumps(new, ensure_ascii=ensure_ascii)
    items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in new.splitlines(keepends=True)]
    if not items:
        return "[]"
    inner = old_json[1:-1]
    if "\n" in inner:
        lead = _WS.match(inner).group(0)  # newline and indentation before the first item
        trail = inner[len(inner.rstrip(" \t\r\n")):]  # newline and indentation before ']'
        return "[" + lead + ("," + lead).join(items) + trail + "]"
    sep = ", " if ", " in inner or len(json.loads(old_json)) < 2 else ","
    return "[" + sep.join(items) + "]"


# --- the notebook -----------------------------------------------------------------------------

@dataclass
class CodeCell:
    number: int  # 1-based position among all cells
    source: str  # as in the notebook
    text: str = ""  # what is checked: IPython lines masked, a final newline added
    masked: Dict[int, str] = field(default_factory=dict)
    added_newline: bool = False


@dataclass
class Notebook:
    text: str  # the JSON text
    bom: bool
    data: dict
    code_cells: List[CodeCell]
    python: bool

    @classmethod
    def parse(cls, data: bytes) -> "Notebook":
        bom = data.startswith(codecs.BOM_UTF8)
        try:
            text = data[len(codecs.BOM_UTF8):].decode("utf-8") if bom else data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotebookError(f"not UTF-8: {exc}") from None
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise NotebookError(f"invalid JSON: {exc}") from None
        except RecursionError:
            raise NotebookError("invalid JSON: nests too deeply") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("cells"), list):
            version = parsed.get("nbformat") if isinstance(parsed, dict) else None
            raise NotebookError(f"not a notebook in nbformat 4 (nbformat: {version!r})")
        metadata = parsed.get("metadata") if isinstance(parsed.get("metadata"), dict) else {}
        language = None
        for key, sub in (("language_info", "name"), ("kernelspec", "language")):
            if isinstance(metadata.get(key), dict) and isinstance(metadata[key].get(sub), str):
                language = language or metadata[key][sub]
        cells = []
        for index, cell in enumerate(parsed["cells"]):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                cells.append(CodeCell(index + 1, _source_text(cell.get("source", ""))))
        return cls(text, bom, parsed, cells, language is None or language.lower() == "python")


def _virtual(cells: Sequence[CodeCell]) -> str:
    return "".join(f"{MARKER} {cell.number}\n{cell.text}" for cell in cells)


class NotebookMap(SourceMap):
    """Positions in the virtual module of a notebook, as cells and rows within them."""

    def __init__(self, text: str, masked: Optional[Dict[int, Dict[int, str]]] = None,
                 file_rows: Optional[Dict[int, List[int]]] = None):
        super().__init__(text)
        self.masked = masked or {}
        self.file_rows = file_rows or {}
        self.segments: List[Tuple[int, int, int, int]] = []  # (start, end, cell, offset in cell)
        self.cells: Dict[int, str] = {}
        self._cell_index: Dict[int, LineIndex] = {}
        markers = list(_MARKER_LINE.finditer(text))
        for k, match in enumerate(markers):
            number = int(match.group(1))
            end = markers[k + 1].start() if k + 1 < len(markers) else len(text)
            prefix = text[: match.start()] if k == 0 else ""  # e.g. imports added above the first marker
            if prefix:
                self.segments.append((0, len(prefix), number, 0))
            self.segments.append((match.end(), end, number, len(prefix)))
            self.cells[number] = prefix + text[match.end():end]

    def locate(self, offset: int) -> Tuple[int, int]:
        """(cell, offset in the cell's text) of a virtual offset."""
        for start, end, cell, base in self.segments:
            if offset <= end:
                return cell, base + max(0, offset - start)
        start, end, cell, base = self.segments[-1]
        return cell, base + end - start

    def position(self, offset: int) -> Position:
        cell, local = self.locate(offset)
        if cell not in self._cell_index:
            self._cell_index[cell] = LineIndex(self.cells[cell])
        row, col = self._cell_index[cell].offset_to_position(local)
        return Position(row, col + 1, cell)

    def lines(self, cell: Optional[int] = None) -> List[str]:
        if cell not in self.cells:
            return []
        lines = self.cells[cell].splitlines(keepends=True)
        for index, original in self.masked.get(cell, {}).items():
            if index < len(lines):
                lines[index] = original
        return [line.rstrip("\r\n") for line in lines]

    def noqa_row(self, diagnostic: Diagnostic) -> int:
        return getattr(diagnostic, "virtual_line", None) or diagnostic.line

    def file_row(self, diagnostic: Diagnostic) -> Optional[int]:
        rows = self.file_rows.get(getattr(diagnostic, "cell", None) or 0)
        if not rows:
            return None
        return rows[min(diagnostic.line, len(rows)) - 1]

    def fix_diff(self, path: str, edits: Sequence[Edit]) -> str:
        from poslint.fix.fixer import unified_diff

        after = NotebookMap(apply_edits(self.text, edits))
        parts = []
        for number, before in self.cells.items():
            new = after.cells.get(number, "")
            if new == before:
                continue
            masked = self.masked.get(number, {})
            old_lines = before.splitlines(keepends=True)
            for index, original in masked.items():
                old_lines[index] = original
            try:
                new, _ = restore_masked(before, new, masked)
            except ValueError:
                pass
            parts.append(unified_diff(f"{path}:cell {number}", "".join(old_lines), new))
        return "".join(parts)


def _file_rows(text: str, spans: Dict[int, SourceSpan]) -> Dict[int, List[int]]:
    """For each cell (1-based), the row in the JSON file of each line of its source."""
    rows: Dict[int, List[int]] = {}
    for index, span in spans.items():
        starts = span.items or [span.start]
        rows[index + 1] = [text.count("\n", 0, start) + 1 for start in starts]
    return rows


def _to_cells(diagnostics: Sequence[Diagnostic], nbmap: NotebookMap) -> List[Diagnostic]:
    out = []
    for d in diagnostics:
        start = nbmap.index.starts[d.line - 1] + d.col - 1
        end = nbmap.index.starts[d.end_line - 1] + d.end_col - 1
        first, last = nbmap.position(start), nbmap.position(end)
        out.append(NotebookDiagnostic(d.path, first.row, first.column, last.row, last.column, d.code, d.message,
                                      d.fix, cell=first.cell, virtual_line=d.line))
    return sorted(out, key=lambda d: d.sort_key)


def _ensure_ascii(text: str) -> bool:
    return text.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", text) is not None


def lint_notebook(path: str, data: bytes, options) -> Tuple["FileResult", Optional[bytes]]:  # noqa: F821
    """Lint a notebook's code cells; return the result and, when fixes changed it, the new file bytes."""
    from poslint.engine.linter import FileResult, file_codes, lint_text

    codes = file_codes(path, options)
    try:
        notebook = Notebook.parse(data)
        spans = source_spans(notebook.text)
    except (NotebookError, ValueError, IndexError, RecursionError) as exc:
        diagnostics = []
        if PARSE_ERROR in codes:
            diagnostics.append(Diagnostic(path, 1, 1, 1, 1, PARSE_ERROR, f"cannot parse: not a notebook: {exc}"))
        return FileResult(path, diagnostics), None
    if not notebook.python:
        return FileResult(path, source_map=NotebookMap("")), None

    bad: List[Diagnostic] = []
    cells: List[CodeCell] = []
    for cell in notebook.code_cells:
        masked = mask_ipython(cell.source)
        if masked is None:
            continue
        cell.text, cell.masked = masked
        error = _parses(cell.text)
        if error is not None:
            if PARSE_ERROR in codes:
                line, col = error.lineno or 1, error.offset or 1
                finding = NotebookDiagnostic(path, line, col, line, col, PARSE_ERROR, f"cannot parse: {error.msg}",
                                             cell=cell.number)
                if options.ignore_noqa or parse_suppressions(cell.source).filter([finding]):
                    bad.append(finding)
            continue
        if cell.text and not cell.text.endswith(("\n", "\r")):
            cell.text += "\n"
            cell.added_newline = True
        cells.append(cell)

    virtual = _virtual(cells)
    result, new_virtual = lint_text(virtual, path, options, codes)
    rows = _file_rows(notebook.text, spans)
    masks = {cell.number: cell.masked for cell in cells}
    new_bytes = None
    if new_virtual is not None:
        try:
            new_text, new_masks = _fixed_notebook(notebook, spans, cells, new_virtual)
        except (ValueError, NotebookError) as exc:
            result = lint_text(virtual, path, replace(options, fix=False, write=False), codes)[0]
            result.errors.append(f"{path}: not fixed: {exc}")
            new_virtual = None
        else:
            new_bytes = (codecs.BOM_UTF8 if notebook.bom else b"") + new_text.encode("utf-8")
            masks = new_masks
            rows = _file_rows(new_text, source_spans(new_text))
            result.diff = _cell_diffs(path, cells, NotebookMap(new_virtual), new_masks)
    nbmap = NotebookMap(new_virtual if new_virtual is not None else virtual, masks, rows)
    result.diagnostics = sorted(bad + _to_cells(result.diagnostics, nbmap), key=lambda d: d.sort_key)
    result.source_map = nbmap
    return result, new_bytes


def _new_sources(cells: Sequence[CodeCell], new_virtual: str):
    """Yield (cell, new source, where its masked lines are now) for each cell whose text changed."""
    after = NotebookMap(new_virtual)
    if [c.number for c in cells] != list(after.cells):
        raise ValueError("the fixes moved a cell boundary")
    for cell in cells:
        new = after.cells[cell.number]
        if new == cell.text:
            continue
        restored, moved = restore_masked(cell.text, new, cell.masked)
        if cell.added_newline and restored.endswith("\n"):
            restored = restored[:-1]
        yield cell, restored, moved


def _fixed_notebook(notebook: Notebook, spans: Dict[int, SourceSpan], cells: Sequence[CodeCell],
                    new_virtual: str) -> Tuple[str, Dict[int, Dict[int, str]]]:
    ensure_ascii = _ensure_ascii(notebook.text)
    masks = {cell.number: cell.masked for cell in cells}
    replacements = []
    expected = json.loads(notebook.text)
    for cell, source, moved in _new_sources(cells, new_virtual):
        span = spans.get(cell.number - 1)
        if span is None:
            raise NotebookError(f"cell {cell.number} has no source to replace")
        old_json = notebook.text[span.start:span.end]
        new_json = serialise_source(source, old_json, ensure_ascii)
        replacements.append((span.start, span.end, new_json))
        expected["cells"][cell.number - 1]["source"] = json.loads(new_json)
        masks[cell.number] = moved
    text = notebook.text
    for start, end, new_json in sorted(replacements, reverse=True):
        text = text[:start] + new_json + text[end:]
    if json.loads(text) != expected:
        raise NotebookError("the rewritten notebook does not read back as intended")
    return text, masks


def _cell_diffs(path: str, cells: Sequence[CodeCell], after: NotebookMap, masks: Dict[int, Dict[int, str]]) -> str:
    from poslint.fix.fixer import unified_diff

    parts = []
    for cell in cells:
        new_lines = after.cells.get(cell.number, "").splitlines(keepends=True)
        for index, original in masks.get(cell.number, {}).items():
            new_lines[index] = original
        old = cell.source + ("\n" if cell.added_newline else "")
        new = "".join(new_lines)
        if new != old:
            parts.append(unified_diff(f"{path}:cell {cell.number}", old, new))
    return "".join(parts)
