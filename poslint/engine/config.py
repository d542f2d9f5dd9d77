"""Configuration: finding it, validating it, inheriting it, and turning codes into a rule set.

As in ruff, each file is linted with the configuration closest to it: the first directory at or
above the file that holds ``.poslint.toml``, ``poslint.toml`` (keys at the top level) or a
``pyproject.toml`` with a ``[tool.poslint]`` table (in that order of preference; a
``pyproject.toml`` without the table is passed over). ``extend = "../pyproject.toml"`` in a
configuration reads that file first and then applies its own keys on top. ``--config PATH`` uses
one file for every linted file, and ``--config KEY=VALUE`` overrides one key. TOML is parsed as
data only.

Globs in a configuration (``exclude``, ``per-file-ignores``...) are relative to the directory of
the file that wrote them; the project root, where the cache lives, is the directory of the
closest configuration.

Rule selection is layered: the files extended first, then the configuration, then ``--config``
overrides, then the command line. In each layer, ``select`` (when given) replaces the rules
enabled so far, ``extend-select`` adds rules and ``ignore`` removes them. With no ``select``
anywhere, every rule is enabled (``ALL``).
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

from poslint.engine.files import DEFAULT_EXCLUDES, check_regular, glob_matches, open_nonblocking, relative_to_root
from poslint.rules import all_rules

KNOWN_KEYS = ("extend", "select", "extend-select", "ignore", "per-file-ignores", "extend-per-file-ignores",
              "exclude", "extend-exclude", "unsafe-fixes", "unfixable", "respect-gitignore", "assume-tf32",
              "src", "follow-imports")

# Configuration files, in order of preference within one directory.
CONFIG_FILES = (".poslint.toml", "poslint.toml", "pyproject.toml")


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
    extend_per_file_ignores: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    unfixable: Tuple[str, ...] = ()
    respect_gitignore: Optional[bool] = None
    # Take float32 matmuls to run in TF32 even where no linted file sets it (POS107).
    assume_tf32: Optional[bool] = None
    # Where first-party modules live, for following imports (relative to ``root``).
    src: Optional[Tuple[str, ...]] = None
    follow_imports: Optional[bool] = None
    extend: Optional[Path] = None  # the file this one extends, resolved
    where: str = ""  # how error messages name the table: "pyproject.toml: [tool.poslint]"
    base: Optional[Path] = None  # the directory relative globs start from, when not the file's

    @property
    def root(self) -> Path:
        """The directory that relative globs (excludes, per-file-ignores) are matched from."""
        if self.base is not None:
            return self.base
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
    """The configuration closest to the common parent of ``paths`` (or to the current directory)."""
    existing = [os.path.abspath(p) for p in paths if os.path.exists(p)]
    if not existing:
        start = Path.cwd()
    else:
        dirs = [p if os.path.isdir(p) else os.path.dirname(p) for p in existing]
        start = Path(os.path.commonpath(dirs))
    for directory in (start, *start.parents):
        found = config_in(directory)
        if found is not None:
            return found
    return None


def config_in(directory: Path) -> Optional[Path]:
    """The configuration file of ``directory`` itself, if it has one (see :data:`CONFIG_FILES`)."""
    for name in CONFIG_FILES:
        candidate = directory / name
        try:
            is_file = candidate.is_file()
        except OSError as exc:  # a directory without search permission, say
            raise ConfigError(f"cannot look for {candidate}: {exc.strerror or exc}") from None
        if is_file and (name != "pyproject.toml" or _table_of(candidate) is not None):
            return candidate
    return None


def _table_of(path: Path) -> Optional[object]:
    """The poslint table of a TOML file: ``[tool.poslint]``, or in a file other than
    ``pyproject.toml`` that has no ``[tool]`` table, the top level (as in ``poslint.toml``)."""
    document = _read_toml(path)
    if path.name == "pyproject.toml" or "tool" in document:
        tool = document.get("tool", {})
        return tool.get("poslint") if isinstance(tool, dict) else None
    return document


def _where(path: Path) -> str:
    return f"{path}: [tool.poslint]" if path.name == "pyproject.toml" else str(path)


def load_config(path: Path) -> Config:
    """One configuration file, validated; what it ``extend``s is not read (see :func:`load_chain`)."""
    table = _table_of(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.poslint] table")
    return parse_table(table, path)


def load_chain(path: Path) -> List[Config]:
    """``path`` and the files it extends, the most basic first, each validated."""
    chain: List[Config] = []
    seen = set()
    current: Optional[Path] = path
    while current is not None:
        key = os.path.realpath(current)
        if key in seen:
            raise ConfigError(f"{current}: `extend` forms a cycle: {' -> '.join(str(c.path) for c in reversed(chain))}"
                              f" -> {current}")
        seen.add(key)
        if not current.exists():
            raise ConfigError(f"{chain[-1].where if chain else current} extend: no such file: {current}")
        config = load_config(current)
        chain.append(config)
        current = config.extend
    return list(reversed(chain))


def parse_override(text: str) -> Config:
    """A ``--config KEY=VALUE`` override, such as ``select = ["POS1"]``: a one-line TOML table."""
    where = f"--config {text!r}"
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: neither a file nor a valid KEY = VALUE TOML pair ({exc})") from None
    if "extend" in table:
        raise ConfigError(f"{where}: `extend` cannot be given on the command line; use --config PATH")
    return parse_table(table, None, where, Path.cwd())


def parse_table(table: object, path: Optional[Path], where: Optional[str] = None,
                base: Optional[Path] = None) -> Config:
    """Validate one table; ``where`` names it in errors, ``base`` is where its globs start."""
    if where is None:
        where = _where(path) if path is not None else "[tool.poslint]"
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

    def per_file(key: str) -> Dict[str, Tuple[str, ...]]:
        found: Dict[str, Tuple[str, ...]] = {}
        raw = table.get(key, {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{where} {key}: expected a table of glob = [codes], got {_describe(raw)}")
        for glob, codes in raw.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{where} {key} {glob!r}: expected a list of strings, got {_describe(codes)}")
            expand_codes(codes, f"{where} {key} {glob!r}")
            found[glob] = tuple(codes)
        return found

    def flag(key: str) -> Optional[bool]:
        value = table.get(key)
        if value is not None and not isinstance(value, bool):
            raise ConfigError(f"{where} {key}: expected true or false, got {_describe(value)}")
        return value

    unfixable = strings("unfixable") or ()
    expand_codes(unfixable, f"{where} unfixable")
    extend = table.get("extend")
    if extend is not None and not isinstance(extend, str):
        raise ConfigError(f"{where} extend: expected the path of a TOML file, got {_describe(extend)}")
    if extend is not None and path is not None:
        extend_path = Path(os.path.expanduser(extend))
        extend = Path(os.path.normpath(extend_path if extend_path.is_absolute() else path.parent / extend_path))

    return Config(path=path, selection=selection, per_file_ignores=per_file("per-file-ignores"),
                  exclude=strings("exclude"), extend_exclude=strings("extend-exclude") or (),
                  unsafe_fixes=flag("unsafe-fixes"), extend_per_file_ignores=per_file("extend-per-file-ignores"),
                  unfixable=unfixable, respect_gitignore=flag("respect-gitignore"),
                  assume_tf32=flag("assume-tf32"), src=strings("src"), follow_imports=flag("follow-imports"),
                  extend=extend, where=where,
                  base=base)


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


# --- the settings of each file ----------------------------------------------------------------

Glob = Tuple[str, Path]  # a glob and the directory it is relative to


@dataclass(frozen=True)
class Settings:
    """Everything that applies to the files governed by one configuration, the command line included."""

    path: Optional[Path]  # the closest configuration file; None when there is none (or --isolated defaults)
    chain: Tuple[Path, ...]  # the files read: the most basic one that is extended first, ``path`` last
    root: Path  # the project root: the directory of ``path`` (else the current directory)
    codes: FrozenSet[str]  # the rules enabled, before per-file-ignores
    per_file_ignores: Tuple[Tuple[str, Path, FrozenSet[str]], ...]
    excludes: Tuple[Glob, ...]
    unsafe_fixes: bool
    unfixable: FrozenSet[str]
    respect_gitignore: bool
    assume_tf32: bool = False
    src: Tuple[str, ...] = ()  # absolute directories where first-party modules live
    follow_imports: bool = True

    def file_codes(self, path: str) -> FrozenSet[str]:
        """The rules that apply to ``path``: the selection less its per-file-ignores."""
        ignored: set = set()
        for glob, base, codes in self.per_file_ignores:
            if glob_matches(glob, relative_to_root(path, base)):
                ignored |= codes
        return self.codes - ignored

    def excluded(self, path: str) -> bool:
        return any(glob_matches(glob, relative_to_root(path, base)) for glob, base in self.excludes)


Layer = Tuple[Config, str]  # a configuration and the label of its keys in errors (see resolve_codes)


def settings_from(layers: Sequence[Layer], path: Optional[Path], root: Path) -> Settings:
    """Apply ``layers`` in order (files extended first, the command line last) over the defaults."""
    selections = []
    per_file: List[Tuple[str, Path, FrozenSet[str]]] = []
    exclude: List[Glob] = [(glob, root) for glob in DEFAULT_EXCLUDES]
    extend_exclude: List[Glob] = []
    unsafe = False
    unfixable: set = set()
    gitignore = True
    assume_tf32 = False
    src = (str(root), str(root / "src"))  # as ruff's default
    follow_imports = True
    for config, label in layers:
        base = config.root
        selections.append((config.selection, label))
        if config.per_file_ignores:
            per_file = [(glob, base, expand_codes(codes, label.format("per-file-ignores")))
                        for glob, codes in config.per_file_ignores.items()]
        per_file += [(glob, base, expand_codes(codes, label.format("extend-per-file-ignores")))
                     for glob, codes in config.extend_per_file_ignores.items()]
        if config.exclude is not None:
            exclude = [(glob, base) for glob in config.exclude]
        extend_exclude += [(glob, base) for glob in config.extend_exclude]
        unsafe = unsafe if config.unsafe_fixes is None else config.unsafe_fixes
        gitignore = gitignore if config.respect_gitignore is None else config.respect_gitignore
        assume_tf32 = assume_tf32 if config.assume_tf32 is None else config.assume_tf32
        if config.src is not None:
            src = tuple(os.path.normpath(os.path.join(base, os.path.expanduser(d))) for d in config.src)
        follow_imports = follow_imports if config.follow_imports is None else config.follow_imports
        unfixable |= expand_codes(config.unfixable, label.format("unfixable"))
    chain = tuple(config.path for config, _ in layers if config.path is not None)
    return Settings(path=path, chain=chain, root=root, codes=resolve_codes(selections),
                    per_file_ignores=tuple(per_file), excludes=tuple(exclude + extend_exclude), unsafe_fixes=unsafe,
                    unfixable=frozenset(unfixable), respect_gitignore=gitignore, assume_tf32=assume_tf32,
                    src=src, follow_imports=follow_imports)


class Resolver:
    """The settings of each file: those of the configuration closest to it (or of ``fixed``, the
    ``--config PATH`` file, for every file), then ``overrides`` (``--config KEY=VALUE``), then
    ``command_line`` (the other options, with its label such as ``"--{}"``)."""

    def __init__(self, fixed: Optional[Path] = None, overrides: Sequence[Config] = (),
                 command_line: Optional[Layer] = None):
        self._extra: List[Layer] = [(o, format_label(o.where)) for o in overrides]
        if command_line is not None:
            self._extra.append(command_line)
        self._by_config: Dict[Optional[Path], Settings] = {}
        self._by_directory: Dict[str, Optional[Path]] = {}
        self._fixed = fixed
        if fixed is not None:
            self._settings(fixed)  # report a bad --config file even when there is nothing to lint

    def for_path(self, path: str) -> Settings:
        """The settings of a file, or of the directory ``path`` names when it is one."""
        absolute = os.path.abspath(path)
        return self.for_directory(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))

    def for_directory(self, directory: str) -> Settings:
        if self._fixed is not None:
            return self._settings(self._fixed)
        return self._settings(self._closest(directory))

    def _closest(self, directory: str) -> Optional[Path]:
        if directory not in self._by_directory:
            found = config_in(Path(directory))
            parent = os.path.dirname(directory)
            if found is None and parent != directory:
                found = self._closest(parent)
            self._by_directory[directory] = found
        return self._by_directory[directory]

    def _settings(self, path: Optional[Path]) -> Settings:
        if path not in self._by_config:
            chain = load_chain(path) if path is not None else []
            layers = [(config, format_label(config.where)) for config in chain] + self._extra
            root = path.parent if path is not None else Path.cwd()
            self._by_config[path] = settings_from(layers, path, root)
        return self._by_config[path]
