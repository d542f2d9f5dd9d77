"""A content-hash cache of lint results, in ``.poslint_cache/`` (or ``--cache-dir``,
``POSLINT_CACHE_DIR``).

A result is keyed by the BLAKE2 digest of the file's bytes, the rules that apply to the file
(the selection less its per-file-ignores), whether ``# noqa`` is honoured and what the run's
project pre-scan found (:mod:`poslint.engine.project`: the setting that lets float32 matmuls
run at reduced precision, in any linted file, or assume-tf32), so that a result is not reused
when such a setting appears or disappears in another file. The poslint
version and a fingerprint of poslint's own source files name the cache file, so that any
change to poslint starts a new one. What is stored is what checking the file found: each
finding with its fix, as JSON. The path a result was found at is not part of the key: a file
moved or copied unchanged is a hit.

To avoid reading unchanged files at all, the cache also keeps, per absolute path, the
``(mtime_ns, size, inode)`` seen when the digest was taken; a file whose ``stat`` still
matches is taken to have that digest. As in git's index, that is trusted only for a file last
modified well (:data:`RACY_NS`) before its digest was taken: a file written twice within one
tick of a coarse file-system clock could otherwise keep a stale digest. Such a file is simply
read and hashed again.

Only results that do not depend on anything else are stored: no read errors, no internal
errors, no notes (a skipped file says so on every run), nothing from a notebook, and with ``--fix``/``--diff`` only files that no fix changed.
With ``--fix``/``--diff``, a cached result is used only when none of its findings has a fix
that would be applied; otherwise the file is checked and fixed as usual, and checked again on
the next run (its content, and so its digest, changed).

A cache that cannot be read, parsed or written is ignored with a warning; it never stops a
run or changes a result. The cache never follows a symbolic link: a cache directory that is one,
or a link in it where one of its files goes, makes the run go without the cache, with a
warning; files are opened with ``O_NOFOLLOW`` and created with ``O_EXCL``. Old cache files are
deleted only if they are regular files that this cache wrote (their name and first bytes say so). Writes go to a temporary file that replaces the cache file, so a
crash leaves the old one whole; two runs at once can lose entries, never corrupt them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat as stat_module
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from poslint import __version__
from poslint.core.diagnostics import Diagnostic, Edit, Fix

DEFAULT_DIR = ".poslint_cache"
ENV_VAR = "POSLINT_CACHE_DIR"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by poslint.\n"
                "# For information about cache directory tags, see https://bford.info/cachedir/\n")
FORMAT = 1
RACY_NS = 2_000_000_000  # coarsest common file-time resolution (FAT: 2 s)

Stat = Tuple[int, int, int]  # mtime_ns, size, inode
_CACHE_FILE = re.compile(r"poslint-[0-9A-Za-z.+!_-]+-[0-9a-f]{24}\.json")
_PAYLOAD_START = b'{"format":'
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def file_stat(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def current_digest(path: str) -> Optional[str]:
    """The digest of the file's bytes now; None if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return digest(handle.read())
    except OSError:
        return None


def _source_fingerprint() -> str:
    """A digest of poslint's own source files (the whole package: the analysis and the rules decide
    the findings), so that an edited poslint never reads old results."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=12)
    h.update(__version__.encode())
    for path in sorted(root.rglob("*.py")):
        try:
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def entry_key(file_digest: str, codes: FrozenSet[str], ignore_noqa: bool, reduced_matmul: Optional[str] = None,
              src: Optional[Sequence[str]] = None) -> str:
    """Everything a file's findings depend on but its dependencies: its bytes, the rules, noqa, the
    project's TF32 setting, and where imports are followed (``src``; None: not followed)."""
    where = json.dumps(list(src) if src is not None else None)
    return f"{file_digest}:{','.join(sorted(codes))}:{int(ignore_noqa)}:{json.dumps(reduced_matmul)}:{where}"


# --- (de)serialising findings ----------------------------------------------------------------

def _dump_diagnostic(d: Diagnostic) -> dict:
    out = {"line": d.line, "col": d.col, "end_line": d.end_line, "end_col": d.end_col, "code": d.code,
           "message": d.message}
    if d.fix is not None:
        out["fix"] = {"edits": [[e.start, e.end, e.replacement] for e in d.fix.edits], "safety": d.fix.safety,
                      "description": d.fix.description, "imports": list(d.fix.imports)}
    return out


def _load_diagnostic(path: str, raw: dict) -> Diagnostic:
    fix = None
    if raw.get("fix") is not None:
        f = raw["fix"]
        fix = Fix(tuple(Edit(int(s), int(e), str(r)) for s, e, r in f["edits"]), f["safety"], str(f["description"]),
                  tuple(str(i) for i in f.get("imports", ())))
        if fix.safety not in ("safe", "unsafe"):
            raise ValueError(f"bad fix safety {fix.safety!r}")
    return Diagnostic(path, int(raw["line"]), int(raw["col"]), int(raw["end_line"]), int(raw["end_col"]),
                      str(raw["code"]), str(raw["message"]), fix)


@dataclass
class Hit:
    diagnostics: List[Diagnostic]


class Cache:
    """One cache file for this poslint (version and source), loaded once and saved once."""

    def __init__(self, directory: str, warn=None):
        self.directory = directory
        self.warn = warn or (lambda message: None)
        self.path = os.path.join(directory, f"poslint-{__version__}-{_source_fingerprint()}.json")
        self.index: Dict[str, list] = {}  # absolute path -> [mtime_ns, size, inode, digest, recorded_ns]
        self.entries: Dict[str, list] = {}  # entry key -> [diagnostic dicts]
        # entry key -> {absolute path: digest} of the project's other files the findings depend on
        self.dependencies: Dict[str, Dict[str, str]] = {}
        self.dirty = False
        self.broken = False
        self._load()

    # ---- loading and saving ----------------------------------------------------------------

    def _load(self) -> None:
        link = self._link()
        if link is not None:
            self.warn(f"{link} is a symbolic link, and the cache never follows one; running without the cache")
            self.broken = True
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = json.loads(handle.read())
        except FileNotFoundError:
            return
        except (OSError, ValueError, RecursionError, MemoryError) as exc:
            self.warn(f"cache {self.path} cannot be read ({_reason(exc)}); ignoring it")
            self.dirty = True  # rewrite it
            return
        if not (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("index"), dict)
                and isinstance(data.get("entries"), dict)):
            self.warn(f"cache {self.path} is not a poslint cache of this version; ignoring it")
            self.dirty = True
            return
        self.index = data["index"]
        self.entries = data["entries"]
        dependencies = data.get("dependencies", {})
        self.dependencies = dependencies if isinstance(dependencies, dict) else {}

    def save(self) -> None:
        if not self.dirty or self.broken:
            return
        live = {row[3] for row in self.index.values() if isinstance(row, list) and len(row) == 5
                and isinstance(row[3], str)}
        entries = {k: v for k, v in self.entries.items() if k.split(":", 1)[0] in live}
        dependencies = {k: v for k, v in self.dependencies.items() if k in entries}
        payload = json.dumps({"format": FORMAT, "index": self.index, "entries": entries,
                              "dependencies": dependencies}, separators=(",", ":")).encode()
        try:
            os.makedirs(self.directory, exist_ok=True)
            link = self._link()
            if link is not None:
                self.warn(f"{link} is a symbolic link, and the cache never follows one; results were not cached")
                return
            _create(os.path.join(self.directory, "CACHEDIR.TAG"), CACHEDIR_TAG)
            _create(os.path.join(self.directory, ".gitignore"), "# Created by poslint.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(payload)
                os.chmod(tmp, 0o644)
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self._remove_stale()
        except OSError as exc:
            self.warn(f"cannot write the cache in {self.directory} ({_reason(exc)}); results were not cached")

    def _link(self) -> Optional[str]:
        """The first of the cache directory and the paths of its files that is a symbolic link."""
        names = ("", "CACHEDIR.TAG", ".gitignore", os.path.basename(self.path))
        for path in (os.path.join(self.directory, name) if name else self.directory for name in names):
            if os.path.islink(path):
                return path
        return None

    def _remove_stale(self) -> None:
        """Cache files of other poslint versions or sources are never read again."""
        mine = os.path.basename(self.path)
        for name in os.listdir(self.directory):
            if name == mine or not _CACHE_FILE.fullmatch(name):
                continue
            path = os.path.join(self.directory, name)
            try:
                fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
                with os.fdopen(fd, "rb") as handle:
                    ours = stat_module.S_ISREG(os.fstat(handle.fileno()).st_mode) and \
                        handle.read(len(_PAYLOAD_START)) == _PAYLOAD_START
                if ours:
                    os.unlink(path)
            except OSError:
                pass  # a link (O_NOFOLLOW), gone meanwhile, or not ours to delete

    # ---- lookups -------------------------------------------------------------------------

    def known_digest(self, abspath: str, stat: Optional[Stat]) -> Optional[str]:
        """The digest recorded for this path, if its ``stat`` is unchanged and not racy."""
        row = self.index.get(abspath)
        if stat is None or not isinstance(row, list) or len(row) != 5 or not isinstance(row[4], int):
            return None
        if tuple(row[:3]) != stat or stat[0] >= row[4] - RACY_NS:
            return None
        return row[3] if isinstance(row[3], str) else None

    def lookup(self, path: str, file_digest: str, codes: FrozenSet[str], ignore_noqa: bool,
               reduced_matmul: Optional[str] = None, src: Optional[Sequence[str]] = None) -> Optional[Hit]:
        key = entry_key(file_digest, codes, ignore_noqa, reduced_matmul, src)
        raw = self.entries.get(key)
        if raw is None or not self._dependencies_unchanged(key):
            return None
        try:
            return Hit([_load_diagnostic(path, d) for d in raw])
        except (KeyError, TypeError, ValueError) as exc:
            if not self.broken:
                self.warn(f"cache {self.path} has a bad entry ({_reason(exc)}); checking the file again")
            return None

    def _dependencies_unchanged(self, key: str) -> bool:
        """Whether every other file the entry's findings depend on still has the bytes it had."""
        recorded = self.dependencies.get(key, {})
        if not isinstance(recorded, dict):
            return False
        for path, known in recorded.items():
            stat = file_stat(path)
            current = self.known_digest(path, stat)
            if current is None:
                current = current_digest(path)
                if current is not None and stat is not None:
                    # An imported file outside the run is read once, not once per importer and run.
                    self.remember_stat(path, stat, current)
            if current != known:
                return False
        return True

    def remember_stat(self, abspath: str, stat: Stat, file_digest: str) -> None:
        row = self.index.get(abspath)
        if isinstance(row, list) and len(row) == 5 and row[:4] == [stat[0], stat[1], stat[2], file_digest] \
                and isinstance(row[4], int) and stat[0] < row[4] - RACY_NS:
            return  # already known, and trusted
        self.index[abspath] = [stat[0], stat[1], stat[2], file_digest, time.time_ns()]
        self.dirty = True

    def store(self, abspath: str, stat: Stat, file_digest: str, codes: FrozenSet[str], ignore_noqa: bool,
              diagnostics: List[Diagnostic], reduced_matmul: Optional[str] = None, src: Optional[Sequence[str]] = None,
              dependencies: Optional[Dict[str, str]] = None) -> None:
        """Remember the findings; ``dependencies`` are the digests of the other files of the project
        that they depend on (what the analysis read through imports, and the modules found calling
        its free functions), checked again at lookup. A file that did not call them before is not
        among them: see the README's "Across files" for what a cached result can miss."""
        self.remember_stat(abspath, stat, file_digest)
        key = entry_key(file_digest, codes, ignore_noqa, reduced_matmul, src)
        value = [_dump_diagnostic(d) for d in diagnostics]
        if self.entries.get(key) != value or self.dependencies.get(key, {}) != (dependencies or {}):
            self.entries[key] = value
            if dependencies:
                self.dependencies[key] = dict(dependencies)
            else:
                self.dependencies.pop(key, None)
            self.dirty = True


def _create(path: str, text: str) -> None:
    """Create ``path`` with ``text`` unless it exists; never through a symbolic link."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)


def cache_directory(option: Optional[str]) -> str:
    """``--cache-dir``, else ``POSLINT_CACHE_DIR``, else ``.poslint_cache`` in the current directory."""
    return option or os.environ.get(ENV_VAR) or DEFAULT_DIR


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
