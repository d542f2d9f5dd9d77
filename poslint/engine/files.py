"""Which files to lint: recursive discovery, excludes, and the is-this-Python test for explicit files.

Exclude globs are gitignore-like. A glob without ``/`` matches the name of a file or of any
directory above it (``build`` skips every ``build`` directory, ``*_pb2.py`` every such file);
a glob with ``/`` matches the path relative to the project root (the directory of the
configuration file, or the current directory when there is none), or any directory above it in
that path. ``*`` may cross ``/``, as in :func:`fnmatch.fnmatch`. A trailing ``/`` is ignored.

Symbolic links are a deliberate choice: discovery never leaves the tree it walks. Directories
met while walking are never followed if they are symbolic links, so discovery cannot leave the
tree or loop; a symbolic link to a file is linted (and, with ``--fix``, its target written) only
when its target lies inside the walked directory, and is skipped with a note otherwise. A
symbolic link named explicitly on the command line is followed wherever it points. A file
reached twice is linted once. Broken symbolic links, symbolic link loops and files that are not
regular files (named pipes, devices, sockets) met while walking are skipped with a note: there
is nothing to lint, and reading a named pipe would block. A directory that cannot be read is an
error, since the files in it go unchecked.
"""

from __future__ import annotations

import ast
import errno
import fnmatch
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from poslint.core.source import SourceText, UndecodableSource

DEFAULT_EXCLUDES = (".git", ".hg", ".venv", "venv", ".tox", "build", "dist", "__pycache__", "node_modules",
                    "site-packages", ".ipynb_checkpoints")

# Files found in directories: Python sources, stubs and Jupyter notebooks (see poslint.integrations.notebook).
LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")

_SHEBANG = re.compile(rb"#![^\n]*\bpython[0-9.]*(?:\s|$)")


def glob_matches(pattern: str, relpath: str) -> bool:
    """True if ``pattern`` matches ``relpath`` (posix, relative) or a directory above it."""
    anchored, literal, regex = _compiled_glob(pattern)
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    if literal is not None and not anchored:
        return literal in parts
    path = "/".join(parts)
    # Each directory above the path, and the path, ends at a "/" or at the end; an anchored glob
    # is matched against the path up to there, another against the name that ends there.
    start = 0
    for end in _ends(path):
        if regex.match(path, 0 if anchored else start, end):
            return True
        start = end + 1
    return False


def _ends(path: str) -> Iterable[int]:
    end = path.find("/")
    while end >= 0:
        yield end
        end = path.find("/", end + 1)
    if path:
        yield len(path)


@lru_cache(maxsize=None)
def _compiled_glob(pattern: str) -> Tuple[bool, Optional[str], "re.Pattern[str]"]:
    """(whether ``pattern`` is matched from the root, the name it is when it has no wildcard,
    its compiled form): each exclude glob is compiled once per run, not once per path."""
    pattern = pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    anchored = "/" in pattern
    body = pattern.lstrip("/")
    literal = None if any(c in body for c in "*?[") else body
    return anchored, literal, re.compile(fnmatch.translate(body))


def relative_to_root(path: str, root: Path) -> str:
    """``path`` relative to ``root`` in posix form, or its absolute form if it lies outside."""
    try:
        cwd = os.getcwd()
    except OSError:  # the current directory is gone: nothing to key the cache on
        return _relative_to_root(path, os.fspath(root), None)
    return _relative_to_root(path, os.fspath(root), cwd)


@lru_cache(maxsize=16384)
def _relative_to_root(path: str, root: str, cwd: Optional[str]) -> str:
    """``cwd`` is only part of the key: a relative ``path`` or ``root`` depends on it. Discovery
    asks this for every path and every exclude glob, so the answer is remembered."""
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


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def open_nonblocking(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that does not block on a named pipe."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def check_regular(fd: int, path: str) -> None:
    """Raise ``OSError`` unless ``fd`` is a regular file: a named pipe would block the run and a
    device such as ``/dev/zero`` would never end."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        raise OSError(code, f"not a regular file: {_kind(mode)}", path)


def read_source(path: str) -> bytes:
    """The bytes of the regular file at ``path``, or an ``OSError``; never blocks on a named pipe."""
    with open(path, "rb", opener=open_nonblocking) as handle:
        check_regular(handle.fileno(), path)
        return handle.read()


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)  # display paths, in order, each file once
    notes: List[str] = field(default_factory=list)  # skipped files: not Python, broken links, outside the tree
    errors: List[str] = field(default_factory=list)  # missing paths, unreadable directories


def discover(paths: Sequence[str], excludes: Iterable[str], root: Path, force_exclude: bool,
             exclusion: Optional[Callable[[str, bool], bool]] = None) -> Discovery:
    """``exclusion(path, named)``, when given, replaces the test of ``excludes`` from ``root``;
    ``named`` says that the path was given (and ``--force-exclude`` is on) rather than walked."""
    excludes = tuple(excludes)
    result = Discovery()
    seen = set()

    def excluded(path: str, named: bool = False) -> bool:
        if exclusion is not None:
            return exclusion(path, named)
        rel = relative_to_root(path, root)
        return any(glob_matches(pattern, rel) for pattern in excludes)

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    def unreadable_directory(exc: OSError) -> None:
        result.errors.append(f"{exc.filename}: cannot read directory: {exc.strerror or exc}")

    def walked_file(child: str, tree: str) -> None:
        """Add a file met while walking ``tree`` (a real path), or say why it is skipped."""
        try:
            mode = os.stat(child).st_mode
        except OSError as exc:
            if exc.errno == errno.ENOENT and os.path.islink(child):
                result.notes.append(f"{child}: skipped, broken symbolic link (its target does not exist)")
            elif exc.errno == errno.ELOOP:
                result.notes.append(f"{child}: skipped, symbolic link loop")
            else:
                add(child)  # the linter reports why it cannot be read
            return
        if not stat.S_ISREG(mode):
            result.notes.append(f"{child}: skipped, not a regular file: {_kind(mode)}")
        elif os.path.islink(child) and not _inside(os.path.realpath(child), tree):
            result.notes.append(f"{child}: skipped, symbolic link to a file outside {tree} "
                                f"(name it on the command line to lint it)")
        else:
            add(child)

    for given in paths:
        path = os.path.normpath(given)
        if not given or not os.path.lexists(path):
            result.errors.append(f"{given}: no such file or directory")
            continue
        if os.path.islink(path) and not os.path.exists(path):
            reason = "symbolic link loop" if _is_loop(path) else "broken symbolic link (its target does not exist)"
            result.errors.append(f"{given}: no such file or directory: {reason}")
            continue
        if force_exclude and excluded(path, named=True):
            continue
        if os.path.isdir(path):
            tree = os.path.realpath(path)
            for top, dirnames, filenames in os.walk(path, onerror=unreadable_directory):
                dirnames[:] = sorted(d for d in dirnames if not excluded(os.path.join(top, d)))
                for name in sorted(filenames):
                    child = os.path.normpath(os.path.join(top, name))
                    if name.endswith(LINTED_SUFFIXES) and not excluded(child):
                        walked_file(child, tree)
            continue
        if path.endswith(LINTED_SUFFIXES):
            add(path)
            continue
        try:
            data = read_source(path)
        except OSError:
            add(path)  # the linter reports why it cannot be read
            continue
        if is_python_source(data):
            add(path)
        else:
            result.notes.append(f"{given}: skipped, not a Python file (no .py suffix, python shebang or Python code)")
    return result


def _inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip(os.sep) + os.sep)


def _is_loop(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
