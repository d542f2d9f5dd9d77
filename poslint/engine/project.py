"""What the files of one run say about the whole project, found before any file is linted.

One fact so far: whether the project lets float32 matmuls run at reduced precision (TF32, or
bfloat16 internally), which POS107 needs and no single file can tell. The settings are:

* ``torch.backends.cuda.matmul.allow_tf32 = <anything but False or 0>``, but for a restore of a
  value read from ``allow_tf32`` (a context manager's exit), a constructor flag that every
  instantiation of its class in the file passes as ``False``, and a function's parameter that no
  call in the run passes anything but ``False`` (a helper ``set_determinism(tf32=False)`` that
  pins TF32 off; with no call seen, its default decides);
* ``torch.set_float32_matmul_precision(<anything but "highest">)``, or any other mention of
  that function (an alias of it, passed around, is a call we cannot see);
* ``torch.backends.fp32_precision = ...``, ``torch.backends.cuda.matmul.fp32_precision = ...``
  or ``torch.backends.mkldnn.matmul.fp32_precision = ...`` with anything but ``"ieee"`` or
  ``"none"`` (``"tf32"``, ``"bf16"``, or a value the text does not show).

The scan is textual and cheap: a file whose bytes hold none of ``tf32``, ``matmul_precision``
and ``fp32_precision`` is dismissed with two substring searches; only the rest is read as text,
without comments and long strings (short literals such as ``"high"`` are kept, since they are
the values). A value the text does not show counts as a setting, so the scan errs towards
reporting. ``torch.backends.cudnn.allow_tf32`` and the cudnn ``fp32_precision`` keys govern
convolutions, not matmuls, and do not count; neither do settings made outside the code (the
``NVIDIA_TF32_OVERRIDE`` environment variable): the ``assume-tf32`` setting covers those. Nor do
settings in tests (``test_*.py``, ``*_test.py``, ``conftest.py``, a ``tests`` folder): they hold
while pytest runs that test.

A setting holds in the process that runs it, and counts for the files of the run that process
runs: those its file imports itself, and those under the deepest folder that holds its file and
all of these (a launcher in ``pkg/bin/`` importing ``pkg.register`` reaches ``pkg/``'s models,
built through a registry no import shows). A helper function that sets it runs where it is
called, so each file that imports it counts as setting it too (``enable_tf32()`` in
``pkg/utils/``, called from ``pkg/training_args.py``). One model's loader in a multi-model server,
or a vendored project's training script, reaches its own part of the tree, not the other models
(a registry that imports them all is not followed further: the loader runs one). A setting in a
torch module's own code (a model that sets it when it is built or run) reaches that model's file
and what it imports, no folder around them: the process that builds it runs that model. A setting
whose file imports model classes (a trainer of those models) reaches those models and what they import:
not the other models beside the utilities it imports too. What a model imports is followed through
the model files it imports in turn, not through utilities and registries.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from poslint.analysis.names import ImportResolver, absolute_module, is_test_module
from poslint.analysis.torch_api import TORCH_MODULE_BASES
from poslint.engine.files import read_source
from poslint.engine.imports import imported_modules, module_of

# The rule that needs the scan: a run without it need not read every file for it.
TF32_RULE = "POS107"
# The reason given when no file sets it but the configuration says to assume it.
ASSUMED = "assume-tf32 is set"

_MARKERS = (b"tf32", b"matmul_precision", b"fp32_precision")

_SHORT_LITERAL = re.compile(r"""(?:'[A-Za-z0-9_]{0,16}'|"[A-Za-z0-9_]{0,16}")\Z""")
_STRIP = re.compile(r"""#[^\r\n]*|'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\r\n])*'|"(?:\\.|[^"\\\r\n])*\"""")
_GAP = r"[\s\\]*"
_ALLOW_TF32 = re.compile(rf"(\w+){_GAP}\.{_GAP}allow_tf32{_GAP}=(?!=){_GAP}(\w+)?")
_SET_PRECISION = re.compile(rf"set_float32_matmul_precision(?:{_GAP}\({_GAP}(['\"]highest['\"]){_GAP}\))?")
_FP32_PRECISION = re.compile(rf"(\w+){_GAP}\.{_GAP}fp32_precision{_GAP}=(?!=){_GAP}(['\"]\w*['\"])?")
# The objects whose ``fp32_precision`` covers matmuls: ``torch.backends`` (every backend) and
# ``<backend>.matmul``.
_MATMUL_OWNERS = frozenset({"backends", "matmul"})


def _code(text: str) -> str:
    """``text`` without comments, and without string literals other than short words."""
    def blank(match):
        literal = match.group(0)
        return literal if _SHORT_LITERAL.match(literal) else " " + "\n" * literal.count("\n")  # keep line numbers

    return _STRIP.sub(blank, text)


def reduced_matmul_setting(text: str, calls_elsewhere: Optional[Callable[[str], List[ast.Call]]] = None
                           ) -> Optional[Tuple[int, str]]:
    """The first setting in ``text`` that lets float32 matmuls run at reduced precision: its line
    and what it sets (``allow_tf32``...); None if there is none. ``calls_elsewhere`` gives the calls
    of a function by its name in the other files of the run (a helper that sets what its caller
    passes sets it only where a call passes something on)."""
    if not any(marker.decode() in text for marker in _MARKERS):
        return None
    code = _code(text)
    found = []
    tree = None
    for match in _ALLOW_TF32.finditer(code):
        if match.group(1) != "cudnn" and match.group(2) not in ("False", "0"):
            if tree is None:
                tree = _parsed(text)
            if not _sets_nothing_new(tree, code.count("\n", 0, match.start()) + 1, calls_elsewhere):
                found.append((match.start(), "allow_tf32"))
    for match in _SET_PRECISION.finditer(code):
        if match.group(1) is None:
            found.append((match.start(), "set_float32_matmul_precision"))
    for match in _FP32_PRECISION.finditer(code):
        if match.group(1) in _MATMUL_OWNERS and (match.group(2) or "").strip("'\"") not in ("ieee", "none"):
            found.append((match.start(), "fp32_precision"))
    if not found:
        return None
    start, what = min(found)
    return code.count("\n", 0, start) + 1, what


def _sets_nothing_new(tree: Optional[ast.Module], line: int,
                      calls_elsewhere: Optional[Callable[[str], List[ast.Call]]] = None) -> bool:
    """Whether the ``allow_tf32`` assignment on ``line`` sets nothing new: it restores a value read
    from ``allow_tf32`` (a context manager's exit: ``allow_tf32 = self.previous``), or sets what
    its function's caller passes, and no call passes anything but ``False`` or ``0`` (a parameter
    defaulting to one of them, or a constructor flag kept in ``self``). (A file that does not
    parse, a notebook's cells: the text decides.)"""
    if tree is None:
        return False
    value = next((node.value for node in ast.walk(tree) if isinstance(node, ast.Assign) and node.lineno == line
                  and any(isinstance(t, ast.Attribute) and t.attr == "allow_tf32" for t in node.targets)), None)
    if not isinstance(value, (ast.Name, ast.Attribute)):
        return False
    # (compared as text: a target and a read of one name differ in their context)
    source = ast.unparse(value)
    saved = {ast.unparse(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Attribute) and node.value.attr == "allow_tf32" for target in node.targets}
    if source in saved:
        return True
    if isinstance(value, ast.Name):
        flag = _parameter_of_enclosing_function(tree, line, value.id)
        return flag is not None and _never_passed_on(tree, *flag, calls_elsewhere)
    return source.startswith("self.") and any(
        _flag_always_false(tree, cls, source) for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef) and cls.lineno <= line <= (cls.end_lineno or cls.lineno))


def _is_off(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, 0)


def _parameter_of_enclosing_function(tree: ast.Module, line: int, name: str
                                     ) -> Optional[Tuple[str, str, int, bool]]:
    """When ``name`` is a parameter of the innermost function whose body holds ``line``: the name a
    call uses (its class's for a constructor), the parameter, its place among a call's positional
    arguments (-1 for keyword-only), and whether it defaults to ``False`` or ``0``."""
    owners = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not functions:
        return None
    function = max(functions, key=lambda node: node.lineno)
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    if name not in [a.arg for a in positional + arguments.kwonlyargs]:
        return None
    owner = owners.get(function)
    bound = isinstance(owner, ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    called_as = owner.name if bound and function.name == "__init__" else function.name
    names = [a.arg for a in positional][1 if bound else 0:]
    return called_as, name, names.index(name) if name in names else -1, _is_off(defaults.get(name))


def _never_passed_on(tree: ast.Module, function: str, parameter: str, index: int, off_by_default: bool,
                     calls_elsewhere: Optional[Callable[[str], List[ast.Call]]]) -> bool:
    """Whether no call of ``function`` (in this file, or elsewhere in the run) passes ``parameter``
    anything but ``False`` or ``0``, and none leaves it to a default that is not one of them. With
    no call seen, only a default of ``False`` or ``0`` sets nothing."""
    calls = _calls_of(tree, function) + (calls_elsewhere(function) if calls_elsewhere is not None else [])
    if not calls:
        return off_by_default
    for call in calls:
        value = _passed(call, parameter, index)
        if _passes_unpacked(call) or not (_is_off(value) or value is None and off_by_default):
            return False
    return True


def _calls_of(tree: Optional[ast.Module], function: str) -> List[ast.Call]:
    """The calls in ``tree`` of a callable named ``function`` (``f(...)``, ``module.f(...)``)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        isinstance(node.func, ast.Name) and node.func.id == function
        or isinstance(node.func, ast.Attribute) and node.func.attr == function)] if tree is not None else []


def _passed(call: ast.Call, parameter: str, index: int) -> Optional[ast.AST]:
    """What ``call`` passes for ``parameter`` (at position ``index``): None if it leaves the default."""
    by_keyword = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if parameter in by_keyword:
        return by_keyword[parameter]
    return call.args[index] if 0 <= index < len(call.args) else None


def _passes_unpacked(call: ast.Call) -> bool:
    """Whether ``call`` passes ``*args`` or ``**kwargs``, whose values the text does not show."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def _flag_always_false(tree: ast.Module, cls: ast.ClassDef, attribute: str) -> bool:
    """Whether ``attribute`` (``self.enabled``) is set in ``cls``'s constructor from a parameter that
    every instantiation of ``cls`` in the file passes as ``False`` or ``0`` (and there is one)."""
    init = next((item for item in cls.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
    params = [a.arg for a in init.args.args[1:]] if init is not None else []
    flag = next((stmt.value.id for stmt in ast.walk(init) if isinstance(stmt, ast.Assign)
                 and isinstance(stmt.value, ast.Name) and stmt.value.id in params
                 and any(ast.unparse(t) == attribute for t in stmt.targets)), None) if init is not None else None
    if flag is None:
        return False
    passed = [_passed(call, flag, params.index(flag)) for call in _calls_of(tree, cls.name)
              if isinstance(call.func, ast.Name)]
    return bool(passed) and all(_is_off(value) for value in passed)


def _notebook_code(data: bytes) -> Optional[str]:
    try:
        cells = json.loads(data).get("cells", [])
        return "\n".join("".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                         for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    except (ValueError, AttributeError, TypeError, RecursionError):
        return None


def project_reduced_matmul(found: Optional[str], assume_tf32: bool) -> Optional[str]:
    """The reason a run gives its files: the setting found in them, else :data:`ASSUMED` if asked."""
    return found if found is not None else (ASSUMED if assume_tf32 else None)


@dataclass
class ReducedMatmulScan:
    """The settings found in the files of a run (path, line, what), in the run's order, and
    which files each reaches (see the module's docstring)."""

    settings: List[Tuple[str, int, str]]
    paths: Sequence[str] = ()
    _reached: Dict[str, Tuple[str, Set[str]]] = field(default_factory=dict)
    _modules: Optional[Dict[str, str]] = None
    _torch_classes: Dict[str, Set[str]] = field(default_factory=dict)  # path -> its torch module classes

    def reason_for(self, path: str) -> Optional[str]:
        """Why float32 matmuls may run at reduced precision where ``path`` runs: the first
        setting that reaches it, as ``<path> sets <what> on line N``; None if none does."""
        target = os.path.abspath(path)
        for setter, line, what in self.settings:
            if setter not in self._reached:
                self._reached[setter] = self._scope(setter, line)
            folder, imported = self._reached[setter]
            if target in imported or os.path.commonpath([folder, target]) == folder:
                return f"{setter} sets {what} on line {line}"
        return None

    def _scope(self, setter: str, line: int) -> Tuple[str, Set[str]]:
        """The folder whose files the setting on ``line`` of ``setter`` reaches (the deepest one that
        holds ``setter`` and every file of the run it imports itself), and those files."""
        if self._modules is None:
            self._modules = {}
            for path in self.paths:
                module = module_of(path, ())[0]
                # (a file in no package is named by its stem alone: ``io``, ``utils``, which name other
                # modules too; its importers beside it lie in its folder anyway)
                if module is not None and "." in module:
                    self._modules.setdefault(module, os.path.abspath(path))
        here = os.path.abspath(setter)
        text = _text(setter)
        if text is None or setter.endswith(".ipynb"):
            return os.path.dirname(here), set()
        module, _, _ = module_of(setter, ())
        tree = _parsed(text)
        runners = [(here, text)]
        helper = _enclosing_function(tree, line)
        if helper is not None and module is not None:
            # A helper that sets it (``enable_tf32(True)``) runs where it is called: the files that
            # import it from here set it too.
            runners += self._importers_of(f"{module}.{helper}", helper)
        calls = _call_lines(tree, helper) if helper is not None and len(runners) == 1 else [line]
        models_here = self._module_classes(here, tree)
        if calls and all(_enclosing_class(tree, at) in models_here for at in calls):
            # Set by a model when it is built or run (itself, or through a helper only it calls):
            # its process runs that model, which is its file and what that imports, directly or
            # not (a model server runs one model per process).
            return here, self._import_closure([here])
        imported: Set[str] = set()
        for path, runner in runners:
            imported |= {self._modules[name] for name in imported_modules(runner, _package(path))
                         if name in self._modules}
        models = sorted({found for path, runner in runners
                         for found in self._imported_model_classes(path, tree if path == here else _parsed(runner))})
        if models:
            # A trainer or loader that imports the models it builds runs those, and what they
            # import: not every model beside the utilities it imports too.
            return os.path.dirname(here), imported | {path for path, _ in runners} | self._import_closure(models)
        folder = os.path.commonpath([os.path.dirname(path) for path, _ in runners] +
                                    [os.path.dirname(path) for path in imported])
        return folder, imported | {path for path, _ in runners}

    def _imported_model_classes(self, path: str, tree: Optional[ast.Module]) -> Set[str]:
        """The files of the run from which the file at ``path`` imports a torch module class by name
        (``from pkg.video.model import VideoModel``): the models it builds."""
        found: Set[str] = set()
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom):
                module = absolute_module(node, _package(path))
                where = self._modules.get(module) if module else None
                if where is not None and any(alias.name in self._module_classes(where) for alias in node.names):
                    found.add(where)
        return found

    def _import_closure(self, paths: Sequence[str]) -> Set[str]:
        """``paths``, the files of the run they import, and what the model files among those import
        in turn: a model's code, not what its utilities and registries import."""
        reached, queue = set(paths), list(paths)
        while queue:
            path = queue.pop()
            text = _text(path)
            for name in imported_modules(text, _package(path)) if text is not None else ():
                found = self._modules.get(name)
                if found is not None and found not in reached:
                    reached.add(found)
                    if self._module_classes(found):
                        queue.append(found)
        return reached

    def _module_classes(self, path: str, tree: Optional[ast.Module] = None) -> Set[str]:
        """The names of the classes the file at ``path`` defines that are torch modules: deriving
        from ``nn.Module`` there, or through bases of the project's other files. Each file is read
        once; a cycle of bases through imports finds none."""
        if path not in self._torch_classes:
            self._torch_classes[path] = set()
            tree = tree if tree is not None else _parsed(_text(path) or "")
            if tree is not None:
                self._torch_classes[path] = self._torch_module_classes(tree, path)
        return self._torch_classes[path]

    def _torch_module_classes(self, tree: ast.Module, path: str) -> Set[str]:
        names = ImportResolver(tree, package=_package(path))
        classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
        found: Set[str] = set()
        grown = True
        while grown:  # (a local base may be defined below the class that derives from it)
            grown = False
            for cls in classes:
                if cls.name not in found and any(self._is_module_base(base, names, found) for base in cls.bases):
                    found.add(cls.name)
                    grown = True
        return found

    def _is_module_base(self, base: ast.AST, names: ImportResolver, local_modules: Set[str]) -> bool:
        if isinstance(base, ast.Name) and base.id in local_modules:
            return True
        module, _, name = (names.qualname(base) or "").rpartition(".")
        if f"{module}.{name}" in TORCH_MODULE_BASES:
            return True
        return module in self._modules and name in self._module_classes(self._modules[module])

    def _importers_of(self, qualified: str, name: str) -> List[Tuple[str, str]]:
        """The files of the run (tests aside) that import ``qualified`` by its name ``name``, with
        their text."""
        found = []
        for path in self.paths:
            if _is_test_file(path) or path.endswith(".ipynb"):
                continue
            text = _text(path)
            if text is not None and name in text and qualified in imported_modules(text, _package(path)):
                found.append((os.path.abspath(path), text))
        return found


def _package(path: str) -> Optional[str]:
    """The package that relative imports in the file at ``path`` start from."""
    module, is_package, _ = module_of(path, ())
    return (module if is_package else module.rpartition(".")[0] if module else None) or None


def _text(path: str) -> Optional[str]:
    try:
        return read_source(path).decode("utf-8", "replace")
    except OSError:
        return None


def _parsed(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _call_lines(tree: Optional[ast.Module], function: str) -> List[int]:
    """The lines of the file's calls of its module-level function ``function``."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == function] if tree else []


def _enclosing(tree: Optional[ast.Module], line: int, kinds: Tuple[type, ...]) -> Optional[str]:
    """The name of the module-level definition of ``kinds`` whose body holds ``line``, if any (None
    for a file that does not parse: the setting then counts for its own part of the tree only)."""
    for node in tree.body if tree is not None else ():
        if isinstance(node, kinds) and node.lineno <= line <= (node.end_lineno or 0):
            return node.name
    return None


def _enclosing_function(tree: Optional[ast.Module], line: int) -> Optional[str]:
    return _enclosing(tree, line, (ast.FunctionDef, ast.AsyncFunctionDef))


def _enclosing_class(tree: Optional[ast.Module], line: int) -> Optional[str]:
    return _enclosing(tree, line, (ast.ClassDef,))


def scan_reduced_matmul(paths: Sequence[str]) -> ReducedMatmulScan:
    """The settings that let float32 matmuls run at reduced precision in ``paths``. A file that
    cannot be read is left to the lint itself, which reports it."""
    settings = []
    for path in paths:
        if _is_test_file(path):
            continue  # a test's setting holds while pytest runs it, not where the model is trained
        try:
            data = read_source(path)  # never blocks on a named pipe, never reads a device
        except OSError:
            continue
        if not any(marker in data for marker in _MARKERS):
            continue
        text = _notebook_code(data) if path.endswith(".ipynb") else data.decode("utf-8", "replace")

        def calls_elsewhere(function: str, setter: str = path) -> List[ast.Call]:
            return [call for other in paths if other != setter and not _is_test_file(other)
                    for call in _calls_in_file(other, function)]

        setting = reduced_matmul_setting(text if text is not None else data.decode("utf-8", "replace"),
                                         calls_elsewhere)
        if setting is not None:
            settings.append((path, setting[0], setting[1]))
    return ReducedMatmulScan(settings, paths)


def _calls_in_file(path: str, function: str) -> List[ast.Call]:
    """The calls of a callable named ``function`` in the file at ``path`` (read only when its text
    names it)."""
    text = _text(path)
    if text is not None and path.endswith(".ipynb"):
        text = _notebook_code(text.encode("utf-8"))
    return _calls_of(_parsed(text), function) if text is not None and function in text else []


def _is_test_file(path: str) -> bool:
    """A test by pytest's conventions, judged from the file's name and its folder only (an
    absolute path may pass through any folder on its way to the project)."""
    where = PurePath(path)
    return is_test_module(".".join((*where.parent.parts[-1:], where.stem)))
