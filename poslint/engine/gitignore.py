"""``.gitignore`` files, respected by directory walks as ruff does (``--no-respect-gitignore``,
``respect-gitignore = false`` turn it off).

Inside a git work tree (a directory at or above the path holds ``.git``), a path is ignored when
the ``.gitignore`` closest to it that has a matching pattern says so, as git decides: a deeper
file overrides a shallower one, a later pattern an earlier one, and ``!pattern`` re-includes.
``.git/info/exclude`` counts as a ``.gitignore`` at the top of the work tree. The user's global
excludes file is not read: a lint result should not depend on the machine. Patterns are matched
by :mod:`pathspec`, which implements git's wildmatch rules. Outside a work tree nothing is ignored.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

import pathspec

Spec = Tuple[str, "pathspec.GitIgnoreSpec"]  # the directory the patterns are relative to, the patterns


class GitIgnore:
    def __init__(self) -> None:
        self._specs: Dict[str, List[Spec]] = {}  # directory -> the specs that apply there, deepest last
        self._tops: Dict[str, Optional[str]] = {}

    def ignored(self, path: str, is_dir: bool) -> bool:
        absolute = os.path.abspath(path)
        for base, spec in reversed(self._specs_for(os.path.dirname(absolute))):
            rel = os.path.relpath(absolute, base).replace(os.sep, "/") + ("/" if is_dir else "")
            verdict = spec.check_file(rel).include
            if verdict is not None:
                return verdict
        return False

    def _top(self, directory: str) -> Optional[str]:
        """The top of the git work tree that holds ``directory``, if any."""
        if directory not in self._tops:
            parent = os.path.dirname(directory)
            if os.path.exists(os.path.join(directory, ".git")):
                self._tops[directory] = directory
            else:
                self._tops[directory] = self._top(parent) if parent != directory else None
        return self._tops[directory]

    def _specs_for(self, directory: str) -> List[Spec]:
        if directory not in self._specs:
            top = self._top(directory)
            if top is None:
                specs: List[Spec] = []
            elif directory == top:
                specs = [s for s in (_read(top, os.path.join(top, ".git", "info", "exclude")),
                                     _read(top, os.path.join(top, ".gitignore"))) if s is not None]
            else:
                specs = list(self._specs_for(os.path.dirname(directory)))
                own = _read(directory, os.path.join(directory, ".gitignore"))
                if own is not None:
                    specs.append(own)
            self._specs[directory] = specs
        return self._specs[directory]


def _read(base: str, path: str) -> Optional[Spec]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:  # none there (or unreadable, which git would pass over too)
        return None
    return base, pathspec.GitIgnoreSpec.from_lines(lines)
