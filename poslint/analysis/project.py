"""Project-wide analysis: the other modules of the project that a linted file imports.

The engine gives a :class:`ModuleSource`, which finds a first-party module's file by its dotted
name (inside the project's roots only). Each module found is a :class:`Unit`: parsed, and
analysed on its own once, when a linted file first uses one of its definitions, *without*
following its own imports, so that what it says depends on its text alone (which makes it
deterministic, cycle-free and cacheable by content). The file
being linted (the *host*) follows its imports: a call to an imported function or class runs
that module's code on the host's argument values, in that module's interpreter, and that code
follows its own imports in turn. What such a call records is kept as :class:`Borrowed` facts
of the other module, anchored at the host's call, for the engine to report. Recursion across
modules is cut where a function is already on its interpreter's call stack, as within a file.

Nothing is imported or executed: modules are read as text and parsed with :mod:`ast`.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol, Set, Tuple

from poslint.analysis.facts import ModuleFacts
from poslint.analysis.interpreter import Interpreter
from poslint.analysis.lattice import Value
from poslint.analysis.names import NOT_FIRST_PARTY, ImportResolver, is_test_module
from poslint.analysis.object_model import ClassInfo, ForeignBases, is_plain_object, resolving_foreign_bases
from poslint.analysis.subtrees import index_module
from poslint.analysis.torch_api import KEEP_FLOAT32_LISTS
from poslint.core.source import LineIndex

# Re-exports (``from .rotary import Rotary`` in ``__init__.py``) followed before giving up.
MAX_REEXPORTS = 8
# Imported modules kept between hosts, least recently used dropped first, up to this much source
# (their trees and facts take some 20 times as much memory): a module's analysis depends on its
# text alone, so one read again gives the same result. A dropped unit is freed at once: nothing
# it made refers back to it strongly (``home``, ``cls`` and ``linted`` are weak references).
MAX_KEPT_SOURCE = 8_000_000
# Trees parsed lately, kept beyond what the units hold up to this much source, so that a module
# the project prefilter's index had to parse (poslint.engine.imports; it reads most modules'
# outlines from their text) shares that parse with its unit: the last tree parsed is kept.
MAX_PARSED_SOURCE = 0
# Modules that import a function, past which its phase is left unknown: a helper that many
# modules call runs in every phase anyway, and each importer is a module to analyse.
MAX_IMPORTERS = 8


class ModuleSource(Protocol):
    def find(self, module: str) -> Optional[Tuple[str, str, bool]]:
        """``(path, text, is_package)`` of a first-party module, or None."""

    def display(self, path: str) -> str:
        """How messages name ``path``."""

    def importers(self, module: str, name: str) -> List[str]:
        """The other modules of ``module``'s top package that may use its ``name``."""


def _may_keep_float32(text: str, cls: str) -> bool:
    """Whether an importer's text may keep a ``cls`` float32, read before analysing it: it has a
    keep-in-float32 list, or it converts a ``self.<attr>`` it builds a ``cls`` into to float32 or wider."""
    if any(marker in text for marker in KEEP_FLOAT32_LISTS):
        return True
    held = set(re.findall(rf"self\.(\w+)\s*(?::[^=\n]*)?=\s*(?:[\w.]+\.)?{re.escape(cls)}\(", text))
    return any(re.search(rf"self\.{attr}\.(?:(?:float|double)\(\s*\)|(?:to|type)\([^()]*(?:float|double))", text)
               for attr in held)


def package_of(module: str, is_package: bool) -> str:
    """The package that relative imports in ``module`` resolve against."""
    return module if is_package else module.rpartition(".")[0]


def parse_module(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=path)


@dataclass(eq=False)
class Unit:
    """A module of the project that some host imports, analysed on its own."""

    module: str
    path: str
    facts: ModuleFacts
    interpreter: Interpreter


@dataclass
class Project:
    source: ModuleSource
    # Whether a module's text may hold a role birth (the engine's prefilter); a module whose text
    # cannot is never run on its own: what its classes hold can carry no role.
    may_matter: Callable[[str], bool] = lambda text: True
    _units: "OrderedDict[str, Optional[Unit]]" = field(default_factory=OrderedDict)
    _loading: Set[str] = field(default_factory=set)
    # The host being analysed: its module name and interpreter.
    host_module: Optional[str] = None
    host: Optional[Interpreter] = None
    # Files of other modules the current host's analysis read (for the cache).
    consulted: Set[str] = field(default_factory=set)
    _checked: Set[str] = field(default_factory=set)  # units found unchanged on disk for this host
    _trees: "OrderedDict[str, Tuple[str, ast.Module]]" = field(default_factory=OrderedDict)  # path -> (text, tree)
    # (module, class) -> what other modules pass to its constructor, for the current host (its rounds)
    _instantiations: Dict[Tuple[str, str], Optional[Dict[str, List[Optional[ast.AST]]]]] = field(default_factory=dict)

    def begin(self, module: Optional[str], interpreter: Interpreter) -> None:
        self.host_module, self.host, self.consulted, self._checked = module, interpreter, set(), set()
        self._instantiations = {}
        kept = sum(len(unit.facts.text) for unit in self._units.values() if unit is not None)
        for module in [m for m, unit in self._units.items() if unit is not None]:  # oldest first
            if kept <= MAX_KEPT_SOURCE:
                break
            kept -= len(self._units.pop(module).facts.text)

    def unit(self, module: str) -> Optional[Unit]:
        if module in self._units and module not in self._checked:
            self._checked.add(module)  # a file fixed earlier in the run is read again
            known, located = self._units[module], self.source.find(module)
            if (known is None) != (located is None) or (known and located and known.facts.text != located[1]):
                del self._units[module]
        if module in self._units:
            found = self._units[module]
            self._units.move_to_end(module)
        elif module in self._loading:
            return None
        else:
            self._loading.add(module)
            try:
                found = self._load(module)
            finally:
                self._loading.discard(module)
            self._units[module] = found
        if found is not None:
            self.consulted.add(found.path)
        return found

    def tree_at_hand(self, path: str, text: str) -> Optional[ast.Module]:
        """The tree of the module file at ``path`` holding ``text`` if one was parsed lately."""
        known = self._trees.get(path)
        return known[1] if known is not None and known[0] == text else None

    def parsed(self, path: str, text: str) -> ast.Module:
        """The indexed tree of the module file at ``path`` holding ``text``: parsed once for the
        project prefilter's index and the unit both (a tree depends on the text alone). Raises
        what :func:`ast.parse` raises."""
        known = self._trees.get(path)
        if known is not None and known[0] == text:
            self._trees.move_to_end(path)
            return known[1]
        tree = parse_module(text, path)
        self._trees[path] = (text, tree)
        held = {id(unit.facts.tree) for unit in self._units.values() if unit is not None}
        extra = sum(len(kept) for kept, tree in self._trees.values() if id(tree) not in held)
        for old in list(self._trees):  # oldest first; what a unit holds costs nothing more
            if extra <= MAX_PARSED_SOURCE or old == path:
                break
            kept, dropped = self._trees.pop(old)
            if id(dropped) not in held:
                extra -= len(kept)
        return tree

    def star_import_aliases(self, module: str, seen: Optional[Set[str]] = None) -> Dict[str, str]:
        """The imported names that ``from <module> import *`` brings in: the module's own imports
        (``import torch``, ``from torch import nn``) and, in turn, those of its star imports. A
        module re-exporting the project's imports (fastai/nbdev's ``from .imports import *``) is
        how some projects import torch in every file. Empty when the module is not the project's."""
        seen = set() if seen is None else seen
        located = self.source.find(module) if module not in seen else None
        seen.add(module)
        if located is None:
            return {}
        path, text, is_package = located
        try:
            tree = self.parsed(path, text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
        self.consulted.add(path)
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        resolver = ImportResolver(tree, imports, package_of(module, is_package))
        aliases: Dict[str, str] = {}
        for starred in resolver.star_modules:
            aliases.update(self.star_import_aliases(starred, seen))
        aliases.update(resolver.aliases)
        return {name: target for name, target in aliases.items() if not name.startswith("_")}

    def phases_elsewhere(self, module: str, name: str, text: str) -> Optional[Set[bool]]:
        """The phases (``runtime`` flags of the callers) in which the other modules of the package
        call the free function ``name`` of the host ``module`` (its source ``text``), which the host
        itself never calls. None when that is not known: no module calls it, one only names it or
        calls it from code of unknown phase, or over :data:`MAX_IMPORTERS` modules import it. A
        function whose ``text`` (its own and that of the host's functions it calls) cannot hold a
        finding is not looked for."""
        if not self.may_matter(text):
            return None
        importers = self.source.importers(module, name)
        if not importers or len(importers) > MAX_IMPORTERS:
            return None
        phases: Set[bool] = set()
        for importer in importers:
            unit = self.unit(importer)
            found = unit.interpreter.model.phases_of_calls(f"{module}.{name}") if unit else None
            if found is None:
                return None
            phases |= found
        return phases

    def method_phases_elsewhere(self, module: str, producers: List[str], method: str, text: str) -> Optional[Set[bool]]:
        """The phases in which the other modules of the package call ``method`` on instances they
        hold of a class of the host ``module``, built by one of ``producers`` (the class's name and
        the host's factories returning it); None when that is not known (as :meth:`phases_elsewhere`)."""
        if not self.may_matter(text):
            return None
        importers = sorted({importer for name in producers for importer in self.source.importers(module, name)})
        if not importers or len(importers) > MAX_IMPORTERS:
            return None
        qualified = {f"{module}.{name}" for name in producers}
        phases: Set[bool] = set()
        for importer in importers:
            unit = self.unit(importer)
            found = unit.interpreter.model.phases_of_method_calls(qualified, method) if unit else None
            phases |= found or set()
        return phases or None

    def instantiations_elsewhere(self, module: str, cls: str, init: ast.AST) -> Optional[Dict[str, List[Optional[ast.AST]]]]:
        """What the other modules of the package pass to each parameter of the constructor
        ``init`` of the host ``module``'s class ``cls`` (see ObjectModel.instantiation_arguments),
        where every module that imports it only instantiates it; None when that is not known: none
        does, one names it otherwise (a subclass, a value passed on), or over :data:`MAX_IMPORTERS`
        modules import it."""
        key = (module, cls)
        if key not in self._instantiations:
            self._instantiations[key] = self._instantiations_in_importers(module, cls, init)
        return self._instantiations[key]

    def kept_float32_elsewhere(self, module: str, cls: str) -> Set[str]:
        """The tensors of the host ``module``'s class ``cls`` that a class of another module of the
        package, which imports it, keeps float32 (ALL_ATTRS: all): by a model's keep-in-float32
        list, or by converting the instance it holds to float32 after construction."""
        importers = [name for name in self.source.importers(module, cls) if not is_test_module(name)]
        kept: Set[str] = set()
        for importer in importers[:MAX_IMPORTERS]:
            located = self.source.find(importer)
            if located is None or not _may_keep_float32(located[1], cls):
                continue  # (read without analysing it: most importers keep nothing)
            unit = self.unit(importer)
            if unit is not None:
                kept |= unit.interpreter.model.kept_float32_imports.get(f"{module}.{cls}", set())
        return kept

    def built_by_modules_elsewhere(self, module: str, cls: str) -> bool:
        """Whether a torch module of another module of the package, which imports the host
        ``module``'s class ``cls``, keeps or builds an instance of it (``self.rope = Rope2D(...)``)."""
        importers = [name for name in self.source.importers(module, cls) if not is_test_module(name)]
        for importer in importers[:MAX_IMPORTERS]:
            located = self.source.find(importer)
            if located is None or f"{cls}(" not in located[1]:
                continue  # (read without analysing it: it names the class but builds none)
            unit = self.unit(importer)
            if unit is None:
                continue
            interpreter = unit.interpreter
            if any(not is_plain_object(holder, interpreter.base_qualname)
                   for holder in interpreter.model.builders_of_import(f"{module}.{cls}")):
                return True
        return False

    def _instantiations_in_importers(self, module: str, cls: str, init: ast.AST):
        # A package's tests build every configuration on purpose; its models build the ones it runs.
        importers = [name for name in self.source.importers(module, cls) if not is_test_module(name)]
        if not importers or len(importers) > MAX_IMPORTERS:
            return None
        passed: Dict[str, List[Optional[ast.AST]]] = {}
        for importer in importers:
            unit = self.unit(importer)
            found = unit.interpreter.model.imported_instantiation_arguments(init, f"{module}.{cls}") if unit else None
            if found is None:
                return None
            for name, nodes in found.items():
                passed.setdefault(name, []).extend(nodes)
        return passed or None

    def _load(self, module: str) -> Optional[Unit]:
        located = self.source.find(module)
        if located is None:
            return None
        path, text, is_package = located
        try:
            tree = self.parsed(path, text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        index = index_module(tree)
        facts = ModuleFacts(tree=tree, text=text, index=LineIndex(text),
                            names=ImportResolver(tree, index.imports, package_of(module, is_package)), module=module)
        interpreter = Interpreter(facts, index.class_names, project=self, path=self.source.display(path))
        interpreter.ran = not self.may_matter(text)
        try:
            with resolving_foreign_bases(None):  # its own text alone
                interpreter.prepare()
        except RecursionError:
            return None
        return Unit(module, path, facts, interpreter)

    def _module_interpreter(self, module: str) -> Optional[Interpreter]:
        if module == self.host_module and self.host is not None:
            return self.host
        unit = self.unit(module)
        return unit.interpreter if unit else None

    def _split(self, qual: str) -> Optional[Tuple[Interpreter, str]]:
        """The longest prefix of ``qual`` that is a module of the project: its interpreter and the rest."""
        parts = qual.split(".")
        for i in range(len(parts) - 1, 0, -1):
            interpreter = self._module_interpreter(".".join(parts[:i]))
            if interpreter is not None:
                return interpreter, ".".join(parts[i:])
        return None

    def foreign_bases(self) -> ForeignBases:
        """Resolves, for the host's analysis, the bases that its imported classes import in turn."""
        def project_class(qual: str) -> Optional[ClassInfo]:
            found = self.definition(qual)
            return found if isinstance(found, ClassInfo) else None
        return ForeignBases(project_class)

    def definition(self, qual: str) -> Optional[object]:
        """What ``qual`` names in the project: a :class:`FunctionInfo`, a :class:`ClassInfo`, or
        the :class:`Value` of a module constant; None for anything else (or outside the project)."""
        if qual.split(".", 1)[0] in NOT_FIRST_PARTY:
            return None
        for _ in range(MAX_REEXPORTS):
            split = self._split(qual)
            if split is None:
                return None
            interpreter, rest = split
            name, _, attr = rest.partition(".")
            model = interpreter.model
            if model is None:
                return None
            if name in model.functions:
                return None if attr else model.functions[name]
            if name in model.classes:
                cls: ClassInfo = model.classes[name]
                interpreter.learn()  # what the class holds, for subclasses and instances here
                return cls.lookup_method(attr) if attr else cls
            alias = interpreter.names.aliases.get(name)
            if alias is not None:  # a re-export: follow it to where it is defined
                qual = alias + (f".{attr}" if attr else "")
                continue
            value = interpreter.globals.get(name)
            return value if isinstance(value, Value) and not attr else None
        return None


__all__ = ["ModuleSource", "Project", "Unit", "package_of", "parse_module"]
