"""``# noqa`` suppression comments, in flake8's syntax.

* ``# noqa`` on the line a finding starts on suppresses every finding there.
* ``# noqa: POS101`` or ``# noqa: POS101,POS102`` (commas and/or spaces) suppresses only those
  codes; a listed prefix such as ``POS1`` covers every code it starts, as in flake8.
* A comment line ``# poslint: noqa`` suppresses every finding in the file, and
  ``# poslint: noqa: POS101`` every ``POS101`` finding in it.

``noqa`` is case-insensitive. Only real comments count: the comments are found with
:mod:`tokenize`, so ``"# noqa"`` inside a string does nothing. If the file cannot be tokenized
(it has a syntax error), every line is scanned for the comment text instead.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from poslint.core.diagnostics import Diagnostic

_CODES = r"[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*"
_LINE = re.compile(rf"#\s*noqa(?::\s?(?P<codes>{_CODES}))?", re.IGNORECASE)
_FILE = re.compile(rf"#\s*poslint\s*:\s*noqa(?:\s*:\s*(?P<codes>{_CODES}))?\s*$", re.IGNORECASE)


@dataclass
class Suppressions:
    # line -> codes (None = every code)
    lines: Dict[int, Optional[FrozenSet[str]]] = field(default_factory=dict)
    file: Optional[FrozenSet[str]] = frozenset()  # None = whole file; empty = nothing

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        if self.file is None or _covered(diagnostic.code, self.file):
            return True
        if diagnostic.line not in self.lines:
            return False
        codes = self.lines[diagnostic.line]
        return codes is None or _covered(diagnostic.code, codes)

    def filter(self, diagnostics: Iterable[Diagnostic]) -> List[Diagnostic]:
        return [d for d in diagnostics if not self.suppresses(d)]


def parse_suppressions(text: str) -> Suppressions:
    result = Suppressions()
    file_codes: set = set()
    for line, comment, own_line in _comments(text):
        whole = _FILE.match(comment)
        if whole and own_line:
            if whole.group("codes") is None:
                result.file = None
            elif result.file is not None:
                file_codes |= _split(whole.group("codes"))
                result.file = frozenset(file_codes)
            continue
        match = _LINE.search(comment)
        if match:
            codes = match.group("codes")
            previous = result.lines.get(line, frozenset())
            if codes is None or previous is None:
                result.lines[line] = None
            else:
                result.lines[line] = previous | _split(codes)
    return result


def _covered(code: str, codes: FrozenSet[str]) -> bool:
    return any(code.startswith(c) for c in codes)


def _split(codes: str) -> FrozenSet[str]:
    return frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c)


def _comments(text: str) -> Iterator[Tuple[int, str, bool]]:
    """Yield (line, comment text, whether the comment is alone on its line)."""
    found: List[Tuple[int, str, bool]] = []
    # Universal newlines: a lone CR ends a line for Python (and flake8), not only for ``ast``.
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.string, not token.line[: token.start[1]].strip()))
    except (tokenize.TokenError, SyntaxError):
        found = []
        for number, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
            position = line.find("#")
            if position >= 0:
                found.append((number, line[position:], not line[:position].strip()))
    return iter(found)
