"""The project's modules, found by dotted name for the project-wide analysis.

The project is where first-party modules live:

* the directory above the top package of the file being linted (found by walking up through
  directories that have an ``__init__.py``), so that a file linted alone still finds its
  sibling modules;
* the ``src`` directories of the configuration (like ruff's ``src``; by default the project
  root and ``<root>/src``).

A module ``a.b.c`` is ``<root>/a/b/c.py`` or ``<root>/a/b/c/__init__.py`` in the first root that
has one. Only regular files whose real path lies inside that root are read (a symbolic link
out of the project is not followed), and they are only read and parsed: never imported. Modules
read this way are analysed to understand the linted file; nothing is reported for them.

:func:`imports_may_matter` extends the prefilter to the project: a file in which no rule can
fire on its own may still get a finding through what it imports, so it is analysed when a name
it imports from the project may carry a role (see its docstring).
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from poslint.analysis.names import absolute_module
from poslint.analysis.object_model import flattened
from poslint.analysis.project import MAX_REEXPORTS, Project, package_of
from poslint.core.source import SourceText, UndecodableSource
from poslint.engine.files import read_source
from poslint.engine.outline import ClassOutline, Outline, outline
from poslint.engine.prefilter import may_have_findings

# Directories without an ``__init__.py`` that a package may span between its regular packages.
MAX_NAMESPACE_GAP = 2
# Files larger than this are not read as modules of the project (generated tables, vendored blobs).
MAX_MODULE_BYTES = 4 * 1024 * 1024
# Texts kept per process, and definition indexes (small); past this many, they are read again.
MAX_KEPT = 512
MAX_DEFINITION_INDEXES = 4096
# Modules of one package whose importers are searched file by file before its whole import index is read.
MAX_IMPORT_SCANS = 8


def _holds_modules(folder: str) -> bool:
    """Whether ``folder`` is a package: it holds modules, itself or in folders named as
    identifiers below it (a namespace package, ``vggsfm/models/utils.py`` with no ``__init__.py``)."""
    for _, subfolders, filenames in os.walk(folder):
        if any(name.endswith(".py") for name in filenames):
            return True
        subfolders[:] = [d for d in subfolders if d.isidentifier()]
    return False


def module_of(path: str, src_roots: Sequence[str]) -> Tuple[Optional[str], bool, Optional[str]]:
    """``(dotted name, is_package, root)`` of the file at ``path``: from the packages above it
    (``__init__.py`` files), else relative to the ``src`` root it lies in; None when neither tells."""
    absolute = os.path.abspath(path)
    directory, filename = os.path.split(absolute)
    stem = os.path.splitext(filename)[0]
    if not stem.isidentifier():
        return None, False, None
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    # Directories without an ``__init__.py`` below a regular package are namespace portions of it
    # (PEP 420: ``esm/layers/`` in ``esm/``, ``libs/perception_encoder/`` between two packages):
    # imports name them all the same. A gap of more directories than that ends the package.
    namespace: List[str] = []
    while os.path.basename(directory).isidentifier() and len(namespace) <= MAX_NAMESPACE_GAP:
        namespace.insert(0, os.path.basename(directory))
        if os.path.isfile(os.path.join(directory, "__init__.py")):
            parts[:0], namespace = namespace, []
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    directory = os.path.join(directory, *namespace)
    if parts and (len(parts) > 1 or not is_package) and directory != os.path.dirname(absolute):
        return ".".join(parts), is_package, directory
    for root in src_roots:
        rel = os.path.relpath(absolute, root)
        if rel.startswith(os.pardir) or os.path.isabs(rel):
            continue
        pieces = os.path.splitext(rel)[0].split(os.sep)
        if pieces[-1] == "__init__":
            pieces = pieces[:-1]
        if pieces and all(p.isidentifier() for p in pieces):
            return ".".join(pieces), is_package, root
        # A checkout whose folder is no identifier (``My-Checkout/pkg/models/x.py``, no
        # ``__init__.py``): its code runs from that folder, where ``pkg`` is a namespace package.
        named = list(itertools.takewhile(str.isidentifier, reversed(pieces)))[::-1]
        if pieces and len(named) > 1 and len(named) < len(pieces):
            checkout = os.path.join(root, *pieces[:len(pieces) - len(named)])
            return ".".join(named), is_package, checkout
    if not is_package:
        return stem, False, os.path.dirname(absolute)
    return None, False, None


class ProjectFiles:
    """The analysis's :class:`~poslint.analysis.project.ModuleSource` for one run's settings.

    One instance lives per process and settings; its :class:`Project` keeps each module it
    analysed, so that files of one package share that work."""

    def __init__(self, src_roots: Sequence[str], display_root: str):
        self.src_roots = tuple(os.path.abspath(r) for r in src_roots)
        self.display_root = display_root
        self.roots: Tuple[str, ...] = self.src_roots
        self.project = Project(self, may_have_findings)
        self._found: Dict[Tuple[Tuple[str, ...], str], Optional[str]] = {}
        self._texts: Dict[str, Tuple[Tuple[int, int], Optional[str]]] = {}
        self._directories: Dict[Tuple[Tuple[str, ...], str], bool] = {}  # whether a module may have submodules
        self.read: Set[str] = set()  # the module files read for the current host: what its result depends on
        self.host: Tuple[Optional[str], bool] = (None, False)  # its module name, and whether it is a package
        # (roots, module, name) -> whether the name may carry a role (see imports_may_matter)
        self.matters: Dict[Tuple[Tuple[str, ...], str, str], bool] = {}
        # For importers: each package's files, the imports of the modules asked about, and (past
        # MAX_IMPORT_SCANS of them) the package's whole import index.
        self._package_listings: Dict[str, List[Tuple[str, str, bool]]] = {}
        self._scanned: Dict[str, Dict[str, List[Tuple[str, str, Optional[frozenset]]]]] = {}
        self._import_indexes: Dict[str, Dict[str, List[Tuple[str, str, Optional[frozenset]]]]] = {}
        self._siblings: Dict[Tuple[Tuple[str, ...], str], List[Tuple[str, str]]] = {}  # per roots and folder

    def for_host(self, path: str, text: Optional[str] = None) -> Tuple[Optional[str], bool]:
        """Prepare to analyse the file at ``path`` (holding ``text``, where the caller has it: an
        editor's unsaved buffer): its module name and whether it is a package."""
        module, is_package, root = module_of(path, self.src_roots)
        roots = ((root,) if root and root not in self.src_roots else ()) + self.src_roots
        self.roots = roots + tuple(d for d in dict.fromkeys(self._script_roots(path, roots, text))
                                   if d not in roots)
        self.read = set()
        self.host = (module, is_package)
        return module, is_package

    def _script_roots(self, path: str, roots: Tuple[str, ...], text: Optional[str]) -> Iterable[str]:
        """Where research code finds its own absolute imports beyond the project's roots, inside
        them: the directories it puts on ``sys.path`` from ``__file__`` (in the file, or in the
        ``__init__.py`` of a package above it, which runs first), then the directories above the
        file (a script's own directory, or one an import-time ``sys.path`` edit elsewhere adds)."""
        absolute = os.path.abspath(path)
        real_roots = [os.path.realpath(r) for r in roots]
        inits = []
        directory = os.path.dirname(absolute)
        while os.path.isfile(os.path.join(directory, "__init__.py")) and len(inits) < 16:
            inits.append(os.path.join(directory, "__init__.py"))
            directory = os.path.dirname(directory)
        for source in [absolute] + inits:
            held = text if source == absolute and text is not None else self.text(source)
            if held is None or "sys.path" not in held:
                continue
            for entry in sys_path_entries(held, source):
                if os.path.isdir(entry) and any(_inside(os.path.realpath(entry), r) for r in real_roots):
                    yield entry
        directory = os.path.dirname(absolute)
        # (past the file's own directory where that is already a root: a script in a folder whose
        # name is no identifier, ``Open-Sora/opensora/utils/``, imports from the folders above)
        while any(_inside(os.path.realpath(directory), r) for r in real_roots):
            if directory in self.src_roots:
                break
            if directory not in roots:
                yield directory
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent

    def _locate(self, module: str) -> Optional[str]:
        key = (self.roots, module)
        if key not in self._found:
            self._found[key] = next((p for root in self.roots for p in self._candidates(root, module)), None)
        return self._found[key]

    @staticmethod
    def _candidates(root: str, module: str) -> Iterable[str]:
        base = os.path.join(root, *module.split("."))
        real_root = os.path.realpath(root)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate) and _inside(os.path.realpath(candidate), real_root):
                yield candidate

    def text(self, path: str) -> Optional[str]:
        """The decoded text of a module file (read again only when its size or time changed)."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        known = self._texts.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        text = None
        if len(self._texts) >= MAX_KEPT:
            self._texts.clear()
        if info.st_size <= MAX_MODULE_BYTES:
            try:
                text = SourceText.from_bytes(read_source(path)).text
            except (OSError, UndecodableSource):
                text = None
        self._texts[path] = (stamp, text)
        return text

    def find(self, module: str) -> Optional[Tuple[str, str, bool]]:
        path = self._locate(module)
        text = self.text(path) if path else None
        if text is None:
            return None
        self.read.add(os.path.abspath(path))
        return path, text, path.endswith("__init__.py")

    def tree(self, path: str, text: str, parse: bool) -> Optional[ast.Module]:
        """The tree of a module file: the one at hand (a unit's, or parsed lately) or, when
        ``parse`` is set, parsed now; None when there is none or it does not parse."""
        if not parse:
            return self.project.tree_at_hand(path, text)
        try:
            return self.project.parsed(path, text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def has_submodule(self, module: str, name: str) -> bool:
        """Whether the project has a module ``<module>.<name>``."""
        key = (self.roots, module)
        if key not in self._directories:
            self._directories[key] = any(os.path.isdir(os.path.join(root, *module.split("."))) for root in self.roots)
        return self._directories[key] and self._locate(f"{module}.{name}") is not None

    def display(self, path: str) -> str:
        rel = os.path.relpath(os.path.abspath(path), self.display_root)
        return path if rel.startswith(os.pardir) else rel.replace(os.sep, "/")

    def importers(self, module: str, name: str) -> List[str]:
        """The other modules of ``module``'s top package, and of the top packages beside it at a
        project root, that may use its ``name``: those that import the name from it, and those
        that import the module itself and mention the name (what the importer's analysis then
        finds is the answer). Sorted; none for a module outside a package (a folder with or
        without ``__init__.py``)."""
        top = module.partition(".")[0]
        init = self._locate(top)
        if init is not None and os.path.basename(init) == "__init__.py":
            directory = os.path.dirname(init)
        else:  # a namespace package (a folder with no __init__.py, `core/vision_encoder/rope.py`)
            directory = next((os.path.join(root, top) for root in self.roots
                              if "." in module and init is None and os.path.isdir(os.path.join(root, top))), None)
            if directory is None:
                return []
        found = set()
        for package_dir, package in [(directory, top), *self._sibling_packages(directory, top)]:
            for importer, path, names in self._imports_of(package_dir, package, module):
                if importer == module:
                    continue
                if names is not None:
                    if name in names or "*" in names:
                        found.add(importer)
                elif re.search(rf"\b{re.escape(name)}\b", self.text(path) or ""):
                    found.add(importer)
        return sorted(found)

    def _sibling_packages(self, directory: str, top: str) -> List[Tuple[str, str]]:
        """The other top packages beside ``directory`` in one of the project's roots (a project
        with ``models/`` and ``utils/`` side by side, each importing the other by its name), as
        ``(directory, name)``: folders named as identifiers that hold ``__init__.py`` or modules
        (what a link out of the project holds is never read: see :meth:`find`)."""
        parent = os.path.dirname(directory)
        key = (self.roots, parent)
        if key not in self._siblings:
            listed = []
            if any(os.path.realpath(parent) == os.path.realpath(root) for root in self.roots):
                try:
                    names = sorted(os.listdir(parent))
                except OSError:
                    names = []
                for name in names:
                    folder = os.path.join(parent, name)
                    if name.isidentifier() and os.path.isdir(folder) and _holds_modules(folder):
                        listed.append((folder, name))
            self._siblings[key] = listed
        return [(folder, name) for folder, name in self._siblings[key] if name != top]

    def _imports_of(self, directory: str, top: str, module: str) -> List[Tuple[str, str, Optional[frozenset]]]:
        """The imports of ``module`` in the package in ``directory`` (named ``top``), as
        ``(importer, path, names imported from it or None)``. Each of the first
        :data:`MAX_IMPORT_SCANS` modules asked about reads only the files whose bytes name the
        module's last part (every import of it does); after that the package's whole import index
        is made once (reading every import costs some ten scans)."""
        index = self._import_indexes.get(directory)
        if index is not None:
            return index.get(module, [])
        known = self._scanned.setdefault(directory, {})
        if module not in known:
            if len(known) >= MAX_IMPORT_SCANS:
                self._import_indexes[directory] = index = self._read_imports(directory, top, None)
                return index.get(module, [])
            known[module] = self._read_imports(directory, top, module.rpartition(".")[2].encode()).get(module, [])
        return known[module]

    def _read_imports(self, directory: str, top: str, mentioned: Optional[bytes]
                      ) -> Dict[str, List[Tuple[str, str, Optional[frozenset]]]]:
        """For each module that the package's files (those whose bytes hold ``mentioned``, or
        all) import from: its importers, as ``(module, path, names imported or None)``, found by
        the same regular expressions as the project prefilter's."""
        index: Dict[str, List[Tuple[str, str, Optional[frozenset]]]] = {}
        for importer, path, is_package in self._package_files(directory, top):
            try:
                data = read_source(path)
            except OSError:
                continue
            if b"import" not in data or (mentioned is not None and mentioned not in data):
                continue
            for imported, names in _imports_in(data.decode("utf-8", "replace"), package_of(importer, is_package)):
                listed = frozenset(sys.intern(n) for n in names) if names is not None else None
                index.setdefault(imported, []).append((importer, path, listed))
                for submodule in names or ():  # ``from pkg import pos_utils``, then ``pos_utils.f``
                    index.setdefault(f"{imported}.{submodule}", []).append((importer, path, None))
        return index

    def _package_files(self, directory: str, top: str) -> List[Tuple[str, str, bool]]:
        """``(module, path, is_package)`` of each module file of the package (listed once)."""
        if directory not in self._package_listings:
            listing = []
            real_root = os.path.realpath(directory)
            for folder, subfolders, filenames in os.walk(directory):
                subfolders[:] = sorted(d for d in subfolders if d.isidentifier())
                below = os.path.relpath(folder, directory)
                parts = [top] + ([] if below == os.curdir else below.split(os.sep))
                for filename in sorted(filenames):
                    stem, extension = os.path.splitext(filename)
                    path = os.path.join(folder, filename)
                    if extension != ".py" or not stem.isidentifier() or not _inside(os.path.realpath(path), real_root):
                        continue
                    try:
                        if os.path.getsize(path) > MAX_MODULE_BYTES:
                            continue
                    except OSError:
                        continue
                    is_package = stem == "__init__"
                    listing.append((".".join(parts if is_package else [*parts, stem]), path, is_package))
            self._package_listings[directory] = listing
        return self._package_listings[directory]

    # ---- the project prefilter ----------------------------------------------------------------

    def imports_may_matter(self, text: str) -> bool:
        """Whether a file that the prefilter clears on its own text may still get a finding
        through the project. It may when it imports from the project:

        * a function or constant whose definition's text passes the prefilter
          (``may_have_findings``), or mentions a name (of its module, or imported there) that
          does, followed depth-first;
        * a class one of whose methods the file names (any identifier of its text: ``__init__``
          for ``super().__init__``, ``post_init``...) or runs unnamed (``__init__``: ``Model(cfg)``
          builds an instance; ``forward`` and ``__call__``: ``model(x)`` calls one), or its class
          body, or what those methods read on ``self``, passes or mentions such a name; the same
          for its bases;
        * a project module (``import a.b``, or a submodule from its package) whose text passes.

        Sound for what the analysis follows: a role is born only in code whose text has the
        prefilter's words, and a file with none of them gets a value with a role from another
        module only by calling, instantiating or subclassing what it imports: the functions it
        calls, the methods it names (a method it never names runs for it only when another method
        calls it on ``self``, which is followed), or the attributes the class body and those
        methods set. Import statements and identifiers are found by regular expressions over the
        whole text, comments and strings included, which can only find more of them."""
        if "import" not in text:
            return False
        module, is_package = self.host
        package = package_of(module, is_package) if module else None
        summary = _Definitions(self, set(_IDENTIFIER.findall(text)) | _RUN_BY_CALLING_AN_INSTANCE)
        for imported, names in _imports_in(text, package):
            if names is None:
                if summary.module_matters(imported):
                    return True
            elif any(summary.name_matters(imported, name) for name in names):
                return True
        return False


# The methods that building and calling an instance run without the caller naming them.
_RUN_BY_CALLING_AN_INSTANCE = frozenset({"__init__", "forward", "__call__"})

_PROJECTS: Dict[Tuple[Tuple[str, ...], str], ProjectFiles] = {}


def project_files(src_roots: Sequence[str], display_root: str) -> ProjectFiles:
    """The process's :class:`ProjectFiles` for these settings (made once, kept for the run)."""
    key = (tuple(src_roots), display_root)
    if key not in _PROJECTS:
        _PROJECTS[key] = ProjectFiles(src_roots, display_root)
    return _PROJECTS[key]


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_SELF_ATTRIBUTE = re.compile(r"\bself\s*\.\s*([A-Za-z_]\w*)")
_SELF_STORE = re.compile(r"\bself\s*\.\s*([A-Za-z_]\w*)\s*(?::[^\n=]*)?=(?!=)")
# The name argument: the first of register_buffer/register_parameter, the second of setattr.
_NAMED_STORE = re.compile(r"\b(?:register_buffer|register_parameter)\s*\(([^,)]*)|\bsetattr\s*\([^,)]*,([^,)]*)")


def _attributes_set(text: str) -> frozenset:
    """What :attr:`_Member.sets` holds, for a method's text."""
    names = set(_SELF_STORE.findall(text))
    for registered, set_by_name in _NAMED_STORE.findall(text):
        names.update(_IDENTIFIER.findall(registered + " " + set_by_name))
    return frozenset(names)


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n\\]|\\\n)*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+((?:[^\n\\#;]|\\\n)*)", re.M)


def _imports_in(text: str, package: Optional[str]) -> Iterable[Tuple[str, Optional[List[str]]]]:
    """``(module, names)`` for each ``from module import names``; ``(module, None)`` for ``import module``."""
    for match in _FROM.finditer(text):
        dots, name, names = match.groups()
        node = ast.ImportFrom(module=name or None, names=[], level=len(dots))
        module = absolute_module(node, package)
        if module is None:
            continue
        listed = [n.split()[0] for n in names.strip("()").replace("\\\n", " ").split(",") if n.split()]
        yield module, listed  # a name that the module does not define is a submodule (see _search)
    for match in _IMPORT.finditer(text):
        for part in match.group(1).replace("\\\n", " ").split(","):
            words = part.split()
            if words:
                yield words[0], None


def imported_modules(text: str, package: Optional[str]) -> Set[str]:
    """The modules ``text`` imports by name (anywhere, a function's lazy import too), and for
    ``from m import x`` also ``m.x``, which may be a submodule; not the packages above them."""
    found: Set[str] = set()
    for module, names in _imports_in(text, package):
        found.add(module)
        found.update(f"{module}.{name}" for name in names or () if name != "*")
    return found


class _Definitions:
    """What the modules of the project define, for :meth:`ProjectFiles.imports_may_matter`.
    ``used`` are the identifiers of the file asking: of a class it imports, only the methods
    whose names it mentions (``super().__init__``, ``self.post_init()``) can run for it, with the
    class body and what those methods call on ``self``."""

    def __init__(self, files: ProjectFiles, used: Set[str]):
        self.files = files
        self.used = used

    def module_matters(self, module: str) -> bool:
        found = self.files.find(module)
        return found is not None and may_have_findings(found[1])

    def name_matters(self, module: str, name: str) -> bool:
        definition = self._definition(module, name)
        for _ in range(MAX_REEXPORTS):  # ``from .utils import GenerationMixin`` in a package's __init__
            if not (isinstance(definition, _Definition) and definition.verdict is None and definition.mentioned):
                break
            module, name = definition.mentioned[0]
            definition = self._definition(module, name)
        if isinstance(definition, _Definition) and definition.members is not None:
            return self._class_matters(definition, self.used)
        return self._memoised(module, name)

    def _memoised(self, module: str, name: str) -> bool:
        """A depth-first search over what a definition mentions. Its answer, and (when it is no)
        the answer of everything it visited, is kept for the process: it depends on the texts
        and the roots alone."""
        memo = self.files.matters
        key = (self.files.roots, module, name)
        if key not in memo:
            visited: Set[Tuple[Tuple[str, ...], str, str]] = set()
            found = self._search(module, name, visited)
            if not found:
                memo.update(dict.fromkeys(visited, False))
            memo[key] = found
        return memo[key]

    def _definition(self, module: str, name: str):
        """The :class:`_Definition` of ``name`` in ``module``; True/False when it is a whole module
        (``import a.b``, or a submodule imported from its package) that passes or not; None."""
        found = self.files.find(module)
        if found is None:
            return None
        path, text, is_package = found
        if not name:
            return may_have_findings(text)
        index = _module_index(path, text, package_of(module, is_package), self.files.tree)
        if name not in index.names:
            return self.module_matters(f"{module}.{name}")
        if index.from_text and self.files.has_submodule(module, name) and not index.parses(self.files, path, text):
            # The tree would have defined nothing: the name is the submodule, as the outline cannot tell.
            return self.module_matters(f"{module}.{name}")
        return index.definition(name, text)

    def _search(self, module: str, name: str, visited: Set[tuple]) -> bool:
        key = (self.files.roots, module, name)
        if key in self.files.matters:
            return self.files.matters[key]
        if key in visited:
            return False
        visited.add(key)
        definition = self._definition(module, name)
        if not isinstance(definition, _Definition):
            return bool(definition)
        if definition.verdict:
            self.files.matters[key] = True
            return True
        return any(self._search(m, n, visited) for m, n in definition.mentioned)

    def _class_matters(self, definition: "_Definition", used: Set[str],
                       seen: Optional[Set[Tuple[str, str]]] = None) -> bool:
        """Whether the members of a class that ``used`` names, or its bases', may hold a finding.
        ``seen`` holds the bases already visited: a base found by an import that resolves to
        the importing class itself (a vendored copy shadowing the package it wraps) is a cycle."""
        seen = set() if seen is None else seen
        selected = {""} | (set(definition.members) & used) | {
            name for name, member in definition.members.items() if member.sets & used}
        pending = list(selected)
        while pending:  # and what the selected methods call on self
            for called in definition.members[pending.pop()].self_calls & set(definition.members):
                if called not in selected:
                    selected.add(called)
                    pending.append(called)
        for member in map(definition.members.get, selected):
            if member.verdict or any(self._memoised(m, n) for m, n in member.mentioned):
                return True
        for base_module, base_name in definition.bases:  # inherited methods the file may call
            if (base_module, base_name) in seen:
                continue
            seen.add((base_module, base_name))
            base = self._definition(base_module, base_name)
            if isinstance(base, _Definition) and base.members is not None:
                if self._class_matters(base, used, seen):
                    return True
            elif base and self._memoised(base_module, base_name):
                return True
        return False


@dataclass(frozen=True)
class _Member:
    verdict: bool  # whether its text passes the prefilter
    mentioned: Tuple[Tuple[str, str], ...]  # the (module, name) pairs it mentions
    self_calls: frozenset  # the ``self.<name>`` it mentions
    # The attributes it sets: ``self.<name> =``, and the identifiers in the names given to
    # ``register_buffer``/``register_parameter``/``setattr`` (a computed name gives its parts).
    sets: frozenset = frozenset()


@dataclass(frozen=True)
class _Definition:
    """A top-level name of a module: whether its definition's text passes the prefilter (None for
    an import), the (module, name) pairs it mentions, and for a class, each method ("" for the
    rest of its body) and its bases."""

    verdict: Optional[bool]
    mentioned: Tuple[Tuple[str, str], ...]
    members: Optional[Dict[str, _Member]] = None
    bases: Tuple[Tuple[str, str], ...] = ()


class _ModuleIndex:
    """The top-level names of one module text and where they are defined (its :class:`Outline`),
    with each name's :class:`_Definition` made when it is first asked for: a search reads few
    of a module's definitions. ``from_text``: the outline was read from the text, not the tree."""

    def __init__(self, outline: Outline, from_text: bool, this_module: str, package: str):
        self.outline = outline
        self.from_text = from_text
        self.this_module = this_module
        self.imported: Dict[str, Tuple[str, str]] = {}
        for alias, (level, module, name) in outline.imported.items():
            absolute = absolute_module(ast.ImportFrom(module=module, names=[], level=level), package)
            if absolute is not None:
                self.imported[alias] = (absolute, name)
        self.names = set(outline.own) | set(self.imported)
        self._made: Dict[str, _Definition] = {}
        self._parses: Optional[bool] = None

    def parses(self, files: "ProjectFiles", path: str, text: str) -> bool:
        if self._parses is None:
            self._parses = files.tree(path, text, True) is not None
        return self._parses

    def definition(self, name: str, text: str) -> _Definition:
        """The :class:`_Definition` of ``name`` (one of :attr:`names`) in ``text``, the text indexed."""
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = self._make(name, _lines_of(text))
        return made

    def _make(self, name: str, lines: List[str]) -> _Definition:
        own, imported = self.outline.own, self.imported

        def source(span: Tuple[int, int]) -> str:
            return "".join(lines[span[0] - 1:span[1]])

        def pairs(spans: Iterable[Tuple[int, int]]) -> Tuple[Tuple[str, str], ...]:
            # Every identifier of the text, strings and comments included: it can only mention more.
            mentioned = {word for span in spans for word in _IDENTIFIER.findall(source(span))}
            return tuple(imported[m] if m in imported else (self.this_module, m)
                         for m in sorted(mentioned) if m != name and (m in own or m in imported))

        found = own.get(name)
        if found is None:
            return _Definition(None, (imported[name],))
        if isinstance(found, ClassOutline):
            members = {method: _Member(may_have_findings(source(span)), pairs([span]),
                                       frozenset(_SELF_ATTRIBUTE.findall(source(span))),
                                       _attributes_set(source(span))) for method, span in found.methods}
            members[""] = _Member(any(may_have_findings(source(s)) for s in found.rest), pairs(found.rest),
                                  frozenset())
            bases = pairs(found.bases)
            return _Definition(any(m.verdict for m in members.values()),
                               tuple(p for m in members.values() for p in m.mentioned) + bases, members, bases)
        return _Definition(may_have_findings(source(found)), pairs([found]))


@functools.lru_cache(maxsize=16)
def _lines_of(text: str) -> List[str]:
    return text.splitlines(keepends=True)


def tree_outline(tree: ast.Module) -> Outline:
    """The :class:`Outline` of a parsed module (what :func:`~poslint.engine.outline.outline`
    gives from its text)."""
    own: Dict[str, object] = {}
    imported: Dict[str, Tuple[int, Optional[str], str]] = {}
    for node in flattened(tree.body):
        if isinstance(node, ast.ClassDef):
            methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            own[node.name] = ClassOutline(
                _span(node), tuple({m.name: _span(m) for m in methods}.items()),
                tuple(_span(s) for s in node.body if s not in methods), tuple(map(_span, node.bases)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own[node.name] = _span(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        own[leaf.id] = _span(node)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name] = (node.level, node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imported[alias.asname] = (0, alias.name, "")
    return Outline(own, imported)


def _span(node: ast.AST) -> Tuple[int, int]:
    return node.lineno, node.end_lineno


# (path, text hash) -> its index
_INDEXES: Dict[Tuple[str, int], _ModuleIndex] = {}


def _module_index(path: str, text: str, package: str,
                  parsed: Callable[[str, str, bool], Optional[ast.Module]]) -> _ModuleIndex:
    """The :class:`_ModuleIndex` of a module: from its text (:func:`outline`), else from its tree;
    ``parsed`` gives the tree when one is at hand without parsing (a unit's) and when asked to
    parse. A module that does not parse defines nothing."""
    key = (path, hash(text))
    if key in _INDEXES:
        return _INDEXES[key]
    if len(_INDEXES) >= MAX_DEFINITION_INDEXES:
        _INDEXES.clear()
    this_module = _module_name(package, path)
    tree = parsed(path, text, False)
    found = outline(text) if tree is None else None
    if found is not None:
        index = _ModuleIndex(found, True, this_module, package)
    else:
        tree = tree or parsed(path, text, True)
        index = _ModuleIndex(tree_outline(tree or ast.Module(body=[], type_ignores=[])), False, this_module, package)
    _INDEXES[key] = index
    return index


def _module_name(package: str, path: str) -> str:
    if path.endswith("__init__.py"):
        return package
    stem = os.path.splitext(os.path.basename(path))[0]
    return f"{package}.{stem}" if package else stem


def sys_path_entries(text: str, path: str) -> List[str]:
    """The directories a module adds to ``sys.path`` (``insert``/``append``) that it computes from
    its own ``__file__``: ``os.path.dirname``/``abspath``/``realpath``/``join`` with literals,
    ``Path(__file__).resolve().parent / "lib"``, ``str(...)``, through module-level names."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: Dict[str, Optional[str]] = {}
    entries = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = _file_path(node.value, path, names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("insert", "append") and _dotted(node.func.value) == "sys.path" and node.args:
            entry = _file_path(node.args[-1], path, names)
            if entry is not None:
                entries.append(os.path.normpath(entry))
    return entries


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _file_path(node: ast.AST, path: str, names: Dict[str, Optional[str]]) -> Optional[str]:
    """The path ``node`` computes from ``__file__`` (the module at ``path``), else None."""
    if isinstance(node, ast.Name):
        return path if node.id == "__file__" else names.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
            and isinstance(node.right.value, str):
        base = _file_path(node.left, path, names)
        return os.path.join(base, node.right.value) if base is not None else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        base = _file_path(node.value, path, names)
        return os.path.dirname(base) if base is not None else None
    if not isinstance(node, ast.Call):
        return None
    callee = _dotted(node.func)
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not node.args:
        return _file_path(node.func.value, path, names)
    if not node.args:
        return None
    first = _file_path(node.args[0], path, names)
    if first is None:
        return None
    if callee in ("os.path.dirname", "path.dirname"):
        return os.path.dirname(first)
    if callee in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "path.abspath", "path.realpath",
                  "str", "Path", "pathlib.Path", "os.fspath"):
        return os.path.normpath(first)
    if callee in ("os.path.join", "path.join"):
        rest = [a.value for a in node.args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return os.path.normpath(os.path.join(first, *rest)) if len(rest) == len(node.args) - 1 else None
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
