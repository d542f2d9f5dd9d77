"""Output formats, chosen by name with ``--output-format``.

A formatter takes the findings (sorted) and a predicate telling whether a finding's fix would be
applied by ``--fix`` with the current settings, and returns the text for stdout. To add a
format, add a function to :data:`FORMATTERS`; the command line offers every key.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from poslint.diagnostics import Diagnostic

Applicable = Callable[[Diagnostic], bool]
Formatter = Callable[[Sequence[Diagnostic], Applicable], str]


def concise(diagnostics: Sequence[Diagnostic], applicable: Applicable) -> str:
    """flake8-style ``path:line:col: CODE message``; a fix ``--fix`` would apply is marked ``[*]``."""
    lines = []
    for d in diagnostics:
        marker = " [*]" if applicable(d) else ""
        lines.append(f"{d.path}:{d.line}:{d.col}: {d.code}{marker} {d.message}\n")
    return "".join(lines)


FORMATTERS: Dict[str, Formatter] = {
    "concise": concise,
}
