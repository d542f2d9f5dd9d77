"""``[tool.poslint]`` configuration: finding it, validating it, and turning codes into a rule set.

The configuration is read from the nearest ``pyproject.toml`` that has a ``[tool.poslint]`` table,
searching upwards from the linted paths (as ruff does: a ``pyproject.toml`` without the table is
passed over), or from the file named by ``--config``. TOML is parsed as data only.

Rule selection is layered: the configuration file first, then the command line. In each layer,
``select`` (when given) replaces the rules enabled so far, ``extend-select`` adds rules and
``ignore`` removes them. With no ``select`` anywhere, every rule is enabled (``ALL``).
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from poslint.engine.files import check_regular, glob_matches, open_nonblocking
from poslint.rules import all_rules

KNOWN_KEYS = ("select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
              "unsafe-fixes")


class ConfigError(Exception):
    """Bad configuration or bad rule codes; the CLI prints it and exits 2."""


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection; ``select=None`` keeps what earlier layers enabled."""

    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()


@dataclass
class Config:
    """The contents of one ``[tool.poslint]`` table, validated."""

    path: Optional[Path] = None  # the TOML file it came from; None when there is none
    selection: Selection = field(default_factory=Selection)
    per_file_ignores: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    unsafe_fixes: Optional[bool] = None

    @property
    def root(self) -> Path:
        """The directory that relative globs (excludes, per-file-ignores) are matched from."""
        return self.path.parent if self.path is not None else Path.cwd()


def expand_codes(tokens: Iterable[str], where: str) -> FrozenSet[str]:
    """Turn exact codes, prefixes (``POS1``) and ``ALL`` into the set of rule codes they name."""
    known = all_rules()
    codes = set()
    for token in tokens:
        token = token.strip()
        if not token:
            continue
        if token == "ALL":
            codes.update(known)
            continue
        matched = {code for code in known if code.startswith(token)}
        if not matched:
            hint = difflib.get_close_matches(token, list(known), n=1)
            suggestion = f" (did you mean {hint[0]}?)" if hint else ""
            raise ConfigError(f"{where}: unknown rule code or prefix {token!r}{suggestion}")
        codes.update(matched)
    return frozenset(codes)


def resolve_codes(layers: Sequence[Tuple[Selection, str]]) -> FrozenSet[str]:
    """Apply selection layers in order.

    Each layer comes with a format string that names a key in error messages, such as
    ``"pyproject.toml: [tool.poslint] {}"`` or ``"--{}"``.
    """
    enabled = frozenset(all_rules())
    for selection, where in layers:
        if selection.select is not None:
            enabled = expand_codes(selection.select, where.format("select"))
        enabled |= expand_codes(selection.extend_select, where.format("extend-select"))
        enabled -= expand_codes(selection.ignore, where.format("ignore"))
    return enabled


def format_label(where: str) -> str:
    """A :func:`resolve_codes` label for keys under ``where`` (braces in paths escaped)."""
    return where.replace("{", "{{").replace("}", "}}") + " {}"


def find_config(paths: Sequence[str]) -> Optional[Path]:
    """The nearest ``pyproject.toml`` with a ``[tool.poslint]`` table above the common parent of ``paths``."""
    existing = [os.path.abspath(p) for p in paths if os.path.exists(p)]
    if not existing:
        start = Path.cwd()
    else:
        dirs = [p if os.path.isdir(p) else os.path.dirname(p) for p in existing]
        start = Path(os.path.commonpath(dirs))
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _read_toml(candidate).get("tool", {}).get("poslint") is not None:
            return candidate
    return None


def load_config(path: Path) -> Config:
    table = _read_toml(path).get("tool", {}).get("poslint")
    if table is None:
        raise ConfigError(f"{path}: no [tool.poslint] table")
    return parse_table(table, path)


def parse_table(table: object, path: Path) -> Config:
    where = f"{path}: [tool.poslint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, got {_describe(table)}")
    for key in table:
        if key not in KNOWN_KEYS:
            hint = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(f"{where}: unknown key {key!r}{suggestion}")

    def strings(key: str) -> Optional[Tuple[str, ...]]:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} {key}: expected a list of strings, got {_describe(value)}")
        return tuple(value)

    selection = Selection(strings("select"), strings("extend-select") or (), strings("ignore") or ())
    # Validate codes now so that a typo is reported even if a later layer would override it.
    resolve_codes([(selection, format_label(where))])

    per_file: Dict[str, Tuple[str, ...]] = {}
    raw = table.get("per-file-ignores", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} per-file-ignores: expected a table of glob = [codes], got {_describe(raw)}")
    for glob, codes in raw.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{where} per-file-ignores {glob!r}: expected a list of strings, got {_describe(codes)}")
        expand_codes(codes, f"{where} per-file-ignores {glob!r}")
        per_file[glob] = tuple(codes)

    unsafe = table.get("unsafe-fixes")
    if unsafe is not None and not isinstance(unsafe, bool):
        raise ConfigError(f"{where} unsafe-fixes: expected true or false, got {_describe(unsafe)}")

    return Config(path=path, selection=selection, per_file_ignores=per_file, exclude=strings("exclude"),
                  extend_exclude=strings("extend-exclude") or (), unsafe_fixes=unsafe)


def per_file_ignored(config: Config, relpath: str) -> FrozenSet[str]:
    """Codes that ``per-file-ignores`` turns off for a file at ``relpath`` (relative to ``config.root``)."""
    ignored: set = set()
    for glob, codes in config.per_file_ignores.items():
        if glob_matches(glob, relpath):
            ignored |= expand_codes(codes, "per-file-ignores")
    return frozenset(ignored)


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb", opener=open_nonblocking) as handle:
            check_regular(handle.fileno(), str(path))  # a named pipe would block the run
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: it nests too deeply") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def codes_list(codes: List[str]) -> Tuple[str, ...]:
    """Split command-line code options: each may hold several codes separated by commas."""
    return tuple(part for option in codes for part in option.split(",") if part.strip())
