"""``--add-noqa``: put a ``# noqa: CODE`` comment on every line with a finding.

A line that already has a ``# noqa: CODES`` comment gets the new codes added to that comment; any
other comment stays and the new one goes after it. A comment is added only where it changes
nothing but the comments: the result must tokenize and parse to the same tree (a line that ends
inside a string, or with a ``\\`` continuation, is left alone and counted as skipped).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from typing import Dict, Iterable, List, Optional, Set, Tuple

from poslint.core.diagnostics import Diagnostic

_NOQA = re.compile(r"#\s*noqa:\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def add_noqa(text: str, findings: Iterable[Diagnostic]) -> Tuple[str, int, int]:
    """The text with the comments added, how many lines got one, how many had to be skipped."""
    wanted: Dict[int, Set[str]] = {}
    for d in findings:
        wanted.setdefault(d.line, set()).add(d.code)
    lines = text.splitlines(keepends=True)
    comments = _comment_lines(text)
    tree = _dump(text)
    added = skipped = 0
    for row, codes in sorted(wanted.items()):
        if not 1 <= row <= len(lines):
            skipped += 1
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        new_body = _with_codes(body, sorted(codes), row in comments)
        candidate = lines[: row - 1] + [new_body + line[len(body):]] + lines[row:]
        if tree is not None and _dump("".join(candidate)) == tree:
            lines = candidate
            added += 1
        else:
            skipped += 1
    return "".join(lines), added, skipped


def _with_codes(body: str, codes: List[str], has_comment: bool) -> str:
    match = _NOQA.search(body) if has_comment else None
    if match is not None:
        present = [c.upper() for c in re.split(r"[,\s]+", match.group("codes")) if c]
        merged = present + [c for c in codes if c not in present]
        return body[: match.start("codes")] + ", ".join(merged) + body[match.end("codes"):]
    return f"{body.rstrip()}  # noqa: {', '.join(codes)}"


def _comment_lines(text: str) -> Set[int]:
    try:
        return {t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError):
        return set()


def _dump(text: str) -> Optional[str]:
    """The tree of ``text``, or None if it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
