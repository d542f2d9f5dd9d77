"""Where a finding or an edit is, as a reader sees it: for notebooks, a cell and a row in it.

A :class:`SourceMap` is built from the text that was checked (after any fixing). It turns the
character offsets of :class:`~poslint.core.diagnostics.Edit` into 1-based ``(cell, row, column)``
positions, gives the lines of a file or cell for code frames, and renders a fix as a diff. For a
``.py`` file ``cell`` is always ``None``; :class:`poslint.integrations.notebook.NotebookMap` adds cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from poslint.core.diagnostics import Diagnostic, Edit
from poslint.core.source import LineIndex


@dataclass(frozen=True)
class Position:
    """A 1-based row and column (columns count characters), in a cell when ``cell`` is set."""

    row: int
    column: int
    cell: Optional[int] = None


def cell_of(diagnostic: Diagnostic) -> Optional[int]:
    """The 1-based notebook cell of a finding, or None for a finding in a ``.py`` file."""
    return getattr(diagnostic, "cell", None)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end:]
    return text


class SourceMap:
    """Positions in a plain source file."""

    def __init__(self, text: str):
        self.text = text
        self._index: Optional[LineIndex] = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def position(self, offset: int) -> Position:
        line, col = self.index.offset_to_position(offset)
        return Position(line, col + 1)

    def lines(self, cell: Optional[int] = None) -> List[str]:
        """The lines of the file (or of ``cell``), without line endings."""
        return self.text.splitlines()

    def noqa_row(self, diagnostic: Diagnostic) -> int:
        """The row of the checked text where a ``# noqa`` comment for this finding goes."""
        return diagnostic.line

    def file_row(self, diagnostic: Diagnostic) -> Optional[int]:
        """The row in the file on disk where the finding is (for annotations); None if unknown."""
        return diagnostic.line

    def fix_diff(self, path: str, edits: Sequence[Edit]) -> str:
        """A unified diff of what these edits alone would change."""
        from poslint.fix.fixer import unified_diff

        return unified_diff(path, self.text, apply_edits(self.text, edits))
