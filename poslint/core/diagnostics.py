"""The one model of a finding: where, which rule, what, and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional, Tuple

FixSafety = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (character offsets into the decoded source) with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    edits: Tuple[Edit, ...]
    safety: FixSafety
    description: str
    # Import statements the edits rely on, e.g. ``"import torch"``; added once if missing.
    imports: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """One finding. Lines and columns are 1-based, as in flake8; end positions are exclusive."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    fix: Optional[Fix] = field(default=None, compare=False)

    @property
    def sort_key(self):
        return (self.path, self.line, self.col, self.code, self.message)
