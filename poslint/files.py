"""Which files to lint: recursive discovery, excludes, and the is-this-Python test for explicit files.

Exclude globs are gitignore-like. A glob without ``/`` matches the name of a file or of any
directory above it (``build`` skips every ``build`` directory, ``*_pb2.py`` every such file);
a glob with ``/`` matches the path relative to the project root (the directory of the
configuration file, or the current directory when there is none), or any directory above it in
that path. ``*`` may cross ``/``, as in :func:`fnmatch.fnmatch`. A trailing ``/`` is ignored.

Directories met while walking are never followed if they are symbolic links, so discovery
cannot leave the tree or loop; a symbolic link named explicitly on the command line is followed,
and symbolic links to files are linted like files (a file reached twice is linted once).
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, List, Sequence

from poslint.source import SourceText, UndecodableSource

DEFAULT_EXCLUDES = (".git", ".hg", ".venv", "venv", ".tox", "build", "dist", "__pycache__", "node_modules",
                    "site-packages", ".ipynb_checkpoints")

# Files found in directories: Python sources and Jupyter notebooks (see poslint.notebook).
LINTED_SUFFIXES = (".py", ".ipynb")

_SHEBANG = re.compile(rb"#![^\n]*\bpython[0-9.]*(?:\s|$)")


def glob_matches(pattern: str, relpath: str) -> bool:
    """True if ``pattern`` matches ``relpath`` (posix, relative) or a directory above it."""
    pattern = pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    anchored = "/" in pattern
    for i in range(len(parts), 0, -1):
        candidate = "/".join(parts[:i]) if anchored else parts[i - 1]
        if fnmatch.fnmatchcase(candidate, pattern.lstrip("/")):
            return True
    return False


def relative_to_root(path: str, root: Path) -> str:
    """``path`` relative to ``root`` in posix form, or its absolute form if it lies outside."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, os.path.abspath(root))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return Path(absolute).as_posix()
    return Path(rel).as_posix()


def is_python_source(data: bytes) -> bool:
    """Decide whether a file without a ``.py`` suffix is Python.

    It is when its first line is a shebang naming ``python`` (``python3``, ``python3.11``...), or
    when it decodes, parses as Python, and has at least one ``import``, ``def`` or ``class``
    statement at module level (a line of prose can parse as an expression, so parsing alone is
    not enough).
    """
    first_line = data.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    if _SHEBANG.match(first_line):
        return True
    try:
        text = SourceText.from_bytes(data).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (UndecodableSource, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for node in tree.body)


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)  # display paths, in order, each file once
    notes: List[str] = field(default_factory=list)  # skipped explicit files
    errors: List[str] = field(default_factory=list)  # missing paths


def discover(paths: Sequence[str], excludes: Iterable[str], root: Path, force_exclude: bool) -> Discovery:
    excludes = tuple(excludes)
    result = Discovery()
    seen = set()

    def excluded(path: str) -> bool:
        rel = relative_to_root(path, root)
        return any(glob_matches(pattern, rel) for pattern in excludes)

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    for given in paths:
        path = os.path.normpath(given)
        if not os.path.lexists(path) or (os.path.islink(path) and not os.path.exists(path)):
            result.errors.append(f"{given}: no such file or directory")
            continue
        if force_exclude and excluded(path):
            continue
        if os.path.isdir(path):
            for top, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not excluded(os.path.join(top, d)))
                for name in sorted(filenames):
                    child = os.path.normpath(os.path.join(top, name))
                    if name.endswith(LINTED_SUFFIXES) and not excluded(child):
                        add(child)
            continue
        if path.endswith(LINTED_SUFFIXES + (".pyi",)):  # a named stub is Python too (pre-commit passes them)
            add(path)
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            add(path)  # the linter reports why it cannot be read
            continue
        if is_python_source(data):
            add(path)
        else:
            result.notes.append(f"{given}: skipped, not a Python file (no .py suffix, python shebang or Python code)")
    return result
