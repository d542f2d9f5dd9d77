"""The torch object model of one module: its functions and classes (wherever they are defined:
in ``if``/``try``/``with`` blocks too), how a module holds tensors (buffers, parameters, plain
attributes, computed names), which methods run only at construction and which may run after
it, and what a function's uses say about its parameters."""

from __future__ import annotations

import ast
import re
import weakref
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from poslint.analysis.facts import WILDCARD, family_matches
from poslint.analysis.lattice import Prec, Value
from poslint.analysis.library_summaries import LIBRARY
from poslint.analysis.subtrees import index_module, walk
from poslint.analysis.torch_api import (ANNOTATION_KINDS, AUTOCAST_SIGNATURES, LINEAR_MODULES, CONSTRUCTION_ROOTS,
                                        CONVERSION_HOOKS, DEVICE_ATTRIBUTES, DTYPE_ATTRIBUTES, DTYPES, FULLY_SHARD,
                                        KEEP_FLOAT32_LISTS, MIXED_PRECISION_POLICIES, MODULE_REGISTRATIONS,
                                        MODULE_MEMBERS, MODULE_RETURNING_SELF, MODULE_TENSOR_DICTS,
                                        TORCH_MODULE_BASES, ATTRIBUTE_SETTERS, WIDENING_MODULE_CASTS,
                                        WIDENING_MODULE_MOVES)


def _alive(ref: Optional["weakref.ref"]) -> object:
    """What ``ref`` names: a function's or class's interpreter, a method's class. They are held
    weakly, so that a module the project drops is freed by reference counting (a strong reference
    back made each a cycle, left to the garbage collector); whoever uses one holds its owner."""
    if ref is None:
        return None
    owner = ref()
    if owner is None:
        raise ReferenceError("a function or class of a module whose analysis was dropped")
    return owner


@dataclass(eq=False)
class FunctionInfo:
    node: ast.AST  # FunctionDef | AsyncFunctionDef | Lambda
    qual: str
    cls_ref: Optional["weakref.ref"] = None  # the class it is a method of (which holds it)
    closure: Optional[Dict[str, Value]] = None
    callers: Set[str] = field(default_factory=set)
    runtime: bool = True
    # False for a method nothing here calls that overrides a hook of a base class imported from
    # elsewhere: that base may call it from its constructor or from forward.
    phase_known: bool = True
    autocast_off: bool = False
    # The interpreter of the module that defines it (another module's, for an imported function).
    home_ref: Optional["weakref.ref"] = None
    _self_attrs: Optional[Set[str]] = field(default=None, repr=False)
    _parameter_attrs: Optional[Dict[str, str]] = field(default=None, repr=False)  # of a constructor
    _built_attrs: Optional[Dict[str, ast.Call]] = field(default=None, repr=False)  # of a constructor

    def self_attrs_read(self) -> Set[str]:
        """The ``self.<name>`` it reads (once: subclasses in every file that imports it ask)."""
        if self._self_attrs is None:
            self._self_attrs = {node.attr for node in walk(self.node)
                                if is_self_attr(node) and isinstance(node.ctx, ast.Load)}
        return self._self_attrs

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")

    @property
    def home(self) -> object:
        return _alive(self.home_ref)

    @property
    def cls(self) -> Optional["ClassInfo"]:
        return _alive(self.cls_ref)


@dataclass(eq=False)
class ClassInfo:
    node: ast.ClassDef
    name: str
    base_names: List[str]
    methods: Dict[str, FunctionInfo] = field(default_factory=dict)
    bases: List["ClassInfo"] = field(default_factory=list)
    # attr -> (storage, merged value); rebuilt each round.
    attrs: Dict[str, Tuple[str, Value]] = field(default_factory=dict)
    # attr -> the names of the classes it may hold an instance of, for ``self.rotary = Rotary(...)``
    # (one) or ``self.rotary = build_rope(...)`` (each class the factory may return)
    instance_attrs: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    foreign_bases: List[str] = field(default_factory=list)  # qualified where the import says
    # Tensors that an override of ``_apply``/``to``/``half``... recomputes after a conversion.
    restored_attrs: Set[str] = field(default_factory=set)
    # Its tensors that a model's keep-in-float32 list names (ALL_ATTRS: every one), found where the
    # model holds it: loaders keep them float32.
    kept_float32: Set[str] = field(default_factory=set)
    # Its methods that shard the instance itself with a mixed-precision policy
    # (``fully_shard(self, mp_policy=...)``), and the dtype FSDP2 then casts the forward's floating
    # arguments to: the dtype's name, or "param_dtype" when a caller chooses it.
    sharding_methods: Dict[str, str] = field(default_factory=dict)
    base_nodes: List[ast.AST] = field(default_factory=list)
    # A record class's fields, in order (a dataclass or a NamedTuple with no ``__init__`` of its
    # own): its generated constructor stores each argument in the field of that name.
    record_fields: Tuple[str, ...] = ()
    home_ref: Optional["weakref.ref"] = None  # the interpreter of the module that defines it
    sealed: bool = False  # its bases are final
    _bases_mro: Optional[Tuple["ClassInfo", ...]] = field(default=None, repr=False)

    @property
    def home(self) -> object:
        return _alive(self.home_ref)

    def lookup_method(self, name: str) -> Optional[FunctionInfo]:
        for cls in self.mro():
            if name in cls.methods:
                return cls.methods[name]
        return None

    def lookup_attr(self, name: str) -> Optional[Tuple[str, Value]]:
        mro = self.mro()
        for cls in mro:
            if name in cls.attrs:
                return cls.attrs[name]
        for cls in mro:
            for key, found in cls.attrs.items():
                if family_matches(key, name):
                    return found
        return None

    def inputs_cast_to(self) -> Optional[str]:
        """The dtype FSDP2 casts the forward's floating arguments to, where a method the instance
        runs (not one an override replaces) shards it with a mixed-precision policy."""
        mro = self.mro()
        for name in {name for cls in mro for name in cls.sharding_methods}:
            owner = next(cls for cls in mro if name in cls.methods)
            if name in owner.sharding_methods:
                return owner.sharding_methods[name]
        return None

    def direct_bases(self) -> Tuple["ClassInfo", ...]:
        """Its bases: those its module's model resolved, and, while the linted file's analysis
        resolves them, those it imports from modules its own module's analysis does not read."""
        foreign = _foreign_bases.of(self) if _foreign_bases is not None and self.foreign_bases else ()
        return (*self.bases, *foreign)

    def mro(self) -> Tuple["ClassInfo", ...]:
        """This class and its bases, breadth first (see :meth:`direct_bases`)."""
        own = self._own_mro()
        if _foreign_bases is None or not any(cls.foreign_bases for cls in own):
            return own
        return _foreign_bases.mro(self)

    def _own_mro(self) -> Tuple["ClassInfo", ...]:
        """The bases its module's model resolved; kept once every class in it has its bases
        (``sealed`` by its module's model: a base in a module still being read has none yet)."""
        if self._bases_mro is not None:
            return (self, *self._bases_mro)
        found = _breadth_first(self, lambda cls: cls.bases)
        if all(cls.sealed for cls in found):
            self._bases_mro = found[1:]  # not self: the class would be a cycle, freed only by the collector
        return found


def _breadth_first(cls: ClassInfo, bases: Callable[[ClassInfo], Iterable[ClassInfo]]) -> Tuple[ClassInfo, ...]:
    seen, out, queue = set(), [], deque([cls])
    while queue:
        cls = queue.popleft()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        out.append(cls)
        queue.extend(bases(cls))
    return tuple(out)


class ForeignBases:
    """The classes that the bases a class imports from other modules of the project name (a
    qualified name -> the class, or None), for one linted file. An imported module is analysed
    on its own text alone, so its classes keep only the bases it defines; the linted file's
    analysis reaches the rest of a class line that runs through several modules (``Leaf(Mid)``,
    ``Mid(Base)``, each in its own module). Held for that analysis only: a module the project
    drops later leaves no class of another pointing into it."""

    def __init__(self, resolve: Callable[[str], Optional[ClassInfo]]):
        self._resolve = resolve
        self._bases: Dict[int, Tuple[ClassInfo, Tuple[ClassInfo, ...]]] = {}  # (the class, kept alive: ids stay unique)
        self._mros: Dict[int, Tuple[ClassInfo, Tuple[ClassInfo, ...]]] = {}

    def of(self, cls: ClassInfo) -> Tuple[ClassInfo, ...]:
        if id(cls) not in self._bases:
            self._bases[id(cls)] = (cls, ())  # a class line that leads back here stops
            found = (self._resolve(qual) for qual in cls.foreign_bases)
            self._bases[id(cls)] = (cls, tuple(base for base in found if base is not None and base is not cls))
        return self._bases[id(cls)][1]

    def mro(self, cls: ClassInfo) -> Tuple[ClassInfo, ...]:
        if id(cls) not in self._mros:
            self._mros[id(cls)] = (cls, _breadth_first(cls, ClassInfo.direct_bases))
        return self._mros[id(cls)][1]


_foreign_bases: Optional[ForeignBases] = None


@contextmanager
def resolving_foreign_bases(resolver: Optional[ForeignBases]) -> Iterator[None]:
    """Class lines through other modules resolved by ``resolver`` inside the block (None: each
    module's own bases only, as an imported module's own analysis needs)."""
    global _foreign_bases
    saved, _foreign_bases = _foreign_bases, resolver
    try:
        yield
    finally:
        _foreign_bases = saved


def is_autocast_off_call(call: ast.AST, names, evaluate: Optional[Callable[[ast.AST], Value]] = None) -> bool:
    """``torch.autocast(..., enabled=False)`` and friends, including helpers named *autocast; with
    ``evaluate``, an ``enabled`` that a name holds (``enabled = False``) counts too."""
    if not isinstance(call, ast.Call):
        return False
    qual = names.qualname(call.func) or ""
    tail = qual.rsplit(".", 1)[-1] if qual else tail_name(call.func)
    if qual == "torch.amp.custom_fwd" or tail == "custom_fwd":
        return any(k.arg == "cast_inputs" for k in call.keywords)
    if not tail.endswith("autocast"):
        return False
    arguments = {k.arg: k.value for k in call.keywords if k.arg}
    spelled = names.qualname(call.func, aliased=False) or ""
    arguments.update((name, arg) for name, arg in zip(AUTOCAST_SIGNATURES.get(spelled, ()), call.args)
                     if not isinstance(arg, ast.Starred))
    enabled, dtype = arguments.get("enabled"), arguments.get("dtype")
    if isinstance(enabled, ast.Constant):
        if enabled.value is False:
            return True
    elif enabled is not None and evaluate is not None and evaluate(enabled).payload_key is False:
        return True
    return dtype is not None and names.qualname(dtype) in ("torch.float32", "torch.float64")


def nested_blocks(stmt: ast.stmt) -> List[Sequence[ast.stmt]]:
    """The statement blocks of a compound statement that runs them in the same scope: ``if``/
    ``else`` (version switches), ``try``/``except ImportError`` (fallbacks), ``with``, ``match``."""
    if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, getattr(ast, "Match", ())):
        return [case.body for case in stmt.cases]
    return []


def flattened(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of a module or class body, with those inside its ``if``/``try``/``with``
    blocks (version switches, import fallbacks)."""
    for stmt in body:
        blocks = nested_blocks(stmt)
        if blocks:
            for block in blocks:
                yield from flattened(block)
        else:
            yield stmt


# At most this many extra analyses of a module whose names have several definitions.
MAX_DEFINITION_VARIANTS = 4


def definition_variants(tree: ast.Module) -> List[ast.Module]:
    """Copies of ``tree`` in which a class or function defined more than once at module level (in
    both branches of ``try``/``except ImportError``, or of ``if``/``else``) is bound to another of
    its definitions. The object model keeps one definition per name (a class's first, a
    function's last: what the run-time binding of each idiom usually is), so each copy lets
    another be analysed. The definitions set aside become ``pass`` where they stand, so every
    other node keeps its place."""
    groups: Dict[Tuple[bool, str], List[ast.stmt]] = {}
    for stmt in flattened(tree.body):
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            groups.setdefault((isinstance(stmt, ast.ClassDef), stmt.name), []).append(stmt)
    alternatives = [(defs, [d for d in defs if d is not (defs[0] if is_class else defs[-1])])
                    for (is_class, _), defs in groups.items() if len(defs) > 1]
    variants = []
    for k in range(min(MAX_DEFINITION_VARIANTS, max((len(alts) for _, alts in alternatives), default=0))):
        aside = {(d.lineno, d.col_offset) for defs, alts in alternatives if k < len(alts)
                 for d in defs if d is not alts[k]}
        try:
            variant = _copied(tree)
        except RecursionError:
            return variants  # (nested too deeply to copy here: the module's own analysis stands)
        for node in ast.walk(variant):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if isinstance(block, list):
                    block[:] = [_set_aside(stmt) if isinstance(stmt, (ast.ClassDef, ast.FunctionDef,
                                                                      ast.AsyncFunctionDef))
                                and (stmt.lineno, stmt.col_offset) in aside else stmt for stmt in block]
        variants.append(variant)
    return variants


def _copied(node):
    """A copy of an AST made of its fields and positions only (not the indexes poslint hangs on
    the original's nodes)."""
    if isinstance(node, ast.AST):
        new = type(node)()
        for name in node._fields:
            setattr(new, name, _copied(getattr(node, name, None)))
        for name in node._attributes:
            if hasattr(node, name):
                setattr(new, name, getattr(node, name))
        return new
    if isinstance(node, list):
        return [_copied(item) for item in node]
    return node


def _set_aside(definition: ast.stmt) -> ast.stmt:
    return ast.Pass(lineno=definition.lineno, col_offset=definition.col_offset,
                    end_lineno=definition.end_lineno, end_col_offset=definition.end_col_offset)


def tail_name(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def attrs_written(function: ast.AST) -> Set[str]:
    """Attributes a method (re)assigns: ``self.x = ...``, ``setattr(self, name, ...)``,
    ``self.__setattr__(name, ...)``, ``self.register_buffer(name, ...)`` (or unbound, by keyword)
    or ``self._buffers[name] = ...``; computed names as families."""
    out = set()
    for node in walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.attr for t in targets if is_self_attr(t)}
            # ``self._buffers["inv_freq"] = t``
            out |= {name for t in targets if isinstance(t, ast.Subscript) and is_self_attr(t.value)
                    and t.value.attr in MODULE_TENSOR_DICTS for name in (literal_attr_name(t.slice),) if name}
        elif isinstance(node, ast.Call):
            func = node.func
            # (unbound on a class, the module first: ``nn.Module.register_buffer(self, ...)``)
            unbound = int(bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "self")
            if isinstance(func, ast.Attribute) and func.attr in MODULE_REGISTRATIONS:
                name_node = registration_parts(node, unbound)[0]
                name = literal_attr_name(name_node) if name_node is not None else None
            elif isinstance(func, ast.Attribute) and func.attr == "__setattr__" and len(node.args) > 1 + unbound:
                name = literal_attr_name(node.args[unbound])
            elif isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) > 1:
                name = literal_attr_name(node.args[1])
            else:
                continue
            if name is not None:
                out.add(name)
    return out


def registration_parts(call: ast.Call, skip: int = 0) -> Tuple[Optional[ast.AST], Optional[ast.AST]]:
    """The name and the tensor of ``register_buffer(name, tensor)`` / ``register_parameter(name,
    param)``, passed by position or by keyword, after the first ``skip`` positional arguments (the
    module itself in ``nn.Module.register_buffer(self, ...)``)."""
    given = {k.arg: k.value for k in call.keywords if k.arg}
    args = call.args[skip:]
    name = args[0] if args else given.get("name")
    value = args[1] if len(args) > 1 else given.get("tensor", given.get("param"))
    return name, value


def literal_attr_name(node: ast.AST) -> Optional[str]:
    """The attribute a string literal or f-string names, with each formatted part a wildcard."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        name = "".join(v.value if isinstance(v, ast.Constant) else WILDCARD for v in node.values)
        return name if name.replace(WILDCARD, "") else None
    return None


def is_self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def is_static(node: ast.AST) -> bool:
    for d in getattr(node, "decorator_list", []):
        if tail_name(d) == "staticmethod":
            return True
    return False


def is_classmethod(node: ast.AST) -> bool:
    """A method whose first parameter is its class (``cls(...)`` builds an instance; it runs no forward)."""
    return any(tail_name(d) == "classmethod" for d in getattr(node, "decorator_list", []))


# In ``ClassInfo.kept_float32``: every tensor of the class.
ALL_ATTRS = "*"


def is_property(node: ast.AST) -> bool:
    """A getter that an attribute read runs: ``@property``, ``@functools.cached_property``."""
    return any(tail_name(d) in ("property", "cached_property") for d in getattr(node, "decorator_list", []))


def widened_receiver(node: ast.AST, names) -> Optional[ast.AST]:
    """``m`` of a conversion ``m.float()``, ``m.double()``, ``m.to(..., torch.float32)`` or
    ``m.type(torch.float64)``, which leaves the floating tensors of a module ``m`` float32 or wider."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr in WIDENING_MODULE_CASTS:
        return node.func.value if not node.args and not node.keywords else None
    if node.func.attr not in WIDENING_MODULE_MOVES:
        return None
    given = [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
    widening = [g for g in given if DTYPES.get(names.qualname(g) or "") in (Prec.F32, Prec.F64)]
    return node.func.value if widening else None


# Bases that leave a class a plain Python object (no ``nn.Module``): a module it holds is no
# registered part of any model, so a model's ``.to()`` does not reach it.
PLAIN_BASES = frozenset({"object", "abc.ABC", "typing.Generic", "typing.Protocol"})


def is_plain_object(cls: ClassInfo, qualname: Callable[[ClassInfo, ast.AST], Optional[str]]) -> bool:
    """Whether ``cls`` and its bases derive from nothing but :data:`PLAIN_BASES`; ``qualname``
    resolves a base expression in the module of the class that names it."""
    for c in cls.mro():
        for node in c.base_nodes:
            target = node.value if isinstance(node, ast.Subscript) else node  # ``Generic[T]``
            if any(base.name == tail_name(target) for base in c.direct_bases()):
                continue  # a class of the project: the loop reaches its own bases
            if (qualname(c, target) or tail_name(target)) not in PLAIN_BASES:
                return False
    return True


def held_names(cls: ClassInfo, attr: str) -> Set[str]:
    """The names of the classes (of this file, or torch's modules that hold tensors, by qualified
    name) whose instance ``self.<attr>`` of a ``cls`` may hold."""
    for c in cls.mro():
        if attr in c.instance_attrs:
            return set(c.instance_attrs[attr])
    return set()


def lookup_instances(cls: ClassInfo, attr: str, classes: Dict[str, ClassInfo]) -> List[ClassInfo]:
    """The classes of this file whose instance ``self.<attr>`` of a ``cls`` may hold."""
    for c in cls.mro():
        if attr in c.instance_attrs:
            return [classes[name] for name in c.instance_attrs[attr] if name in classes]
    return []


def annotation_parts(annotation: Optional[ast.AST]) -> List[ast.AST]:
    """What an annotation names, in order: ``Impl``, ``"Impl"`` (a forward reference),
    ``Optional[Impl]`` and ``Impl | None`` each give ``Impl`` (and ``None``)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return annotation_parts(annotation.left) + annotation_parts(annotation.right)
    if isinstance(annotation, ast.Subscript) and tail_name(annotation.value) == "Optional":
        return annotation_parts(annotation.slice)
    return [annotation] if annotation is not None else []


def _annotation_kind(annotation: ast.AST) -> Optional[str]:
    """What ``torch.device``, ``torch.dtype``, ``torch.Tensor``, ``Optional[...]`` or ``X | None`` says."""
    if isinstance(annotation, ast.BinOp):
        return _annotation_kind(annotation.left) or _annotation_kind(annotation.right)
    if isinstance(annotation, ast.Subscript) and tail_name(annotation.value) == "Optional":
        return _annotation_kind(annotation.slice)
    return ANNOTATION_KINDS.get(tail_name(annotation))


def parameter_kinds(function: ast.AST) -> Dict[str, Set[str]]:
    """For each name in ``function``: "device", "dtype" and/or "tensor", from its uses."""
    kinds: Dict[str, Set[str]] = {}

    def mark(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.Name):
            kinds.setdefault(node.id, set()).add(kind)

    for node in walk(function):
        if isinstance(node, ast.arg) and node.annotation is not None:
            kind = _annotation_kind(node.annotation)  # ``device: torch.device | None``
            if kind is not None:
                kinds.setdefault(node.arg, set()).add(kind)
        elif isinstance(node, ast.keyword) and node.arg in ("device", "dtype"):
            mark(node.value, node.arg)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.attr in DEVICE_ATTRIBUTES:
                mark(node.value, "device")
            elif node.attr not in DTYPE_ATTRIBUTES:
                mark(node.value, "tensor")
        elif isinstance(node, ast.Subscript):
            mark(node.value, "tensor")
        elif isinstance(node, ast.Call) and tail_name(node.func) == "finfo" and node.args:
            mark(node.args[0], "dtype")
        elif isinstance(node, ast.Compare):
            if any(isinstance(n, ast.Attribute) and n.attr in ("float16", "bfloat16", "float32", "float64")
                   for n in ast.walk(node)):
                for operand in (node.left, *node.comparators):
                    mark(operand, "dtype")
    return kinds


# Callers of a free function in other modules of its package (see ModuleModel.compute_runtime).
CALLED_ELSEWHERE_AT_CONSTRUCTION = "<called elsewhere at construction>"
CALLED_ELSEWHERE_AFTER_CONSTRUCTION = "<called elsewhere after construction>"
CALLED_ELSEWHERE = frozenset({CALLED_ELSEWHERE_AT_CONSTRUCTION, CALLED_ELSEWHERE_AFTER_CONSTRUCTION})
# The caller of what a lambda stored in ``self.<attr>`` calls when no method calls ``self.<attr>()``.
STORED_CALLABLE = "<stored callable>"


class ModuleModel:
    """The functions and classes of one module, wherever they are defined, and the phase each
    runs in: construction only, or possibly after it (forward, lazy rebuilds)."""

    def __init__(self, tree: ast.Module, names, class_names: Set[str],
                 resolve_class: Optional[Callable[[ast.AST], Optional[ClassInfo]]] = None,
                 phases_elsewhere: Optional[Callable[..., Optional[Set[bool]]]] = None):
        self.tree = tree
        self.names = names
        self.class_names = class_names  # every class defined in the file, at any depth
        self.functions: Dict[str, FunctionInfo] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.subclasses: Dict[str, List[ClassInfo]] = {}
        self.autocast_off_decorators: Set[str] = set()
        # Classes of other modules (qualified) that a class here holds under a keep-in-float32 name.
        self.kept_float32_imports: Dict[str, Set[str]] = {}
        self._tables: Optional[Dict[str, List[str]]] = None
        self._factory_classes: Optional[Dict[str, Tuple[str, ...]]] = None
        self._demo: Optional[Set[int]] = None
        self._holders: Optional[Dict[str, List[ClassInfo]]] = None
        self._aliases: Optional[Dict[str, Set[str]]] = None
        self._attribute_names: Optional[Tuple[Dict[int, Set[str]], Set[str], Tuple[str, ...], bool]] = None
        index_module(tree)  # the subtrees that collect and compute_runtime read
        self.collect(tree, resolve_class)
        self.compute_runtime(phases_elsewhere)
        self._keep_float32_converted()

    def collect(self, tree: ast.Module, resolve_class: Optional[Callable[[ast.AST], Optional[ClassInfo]]]) -> None:
        """``resolve_class``: a base class expression -> the class another module of the project
        defines, if any (not kept: it is bound to the interpreter, which holds this model)."""
        for stmt in tree.body:
            self.collect_stmt(stmt)
        for cls in self.classes.values():
            cls.bases, cls.foreign_bases = [], []
            for name, node in zip(cls.base_names, cls.base_nodes):
                if name in self.classes and name != cls.name:
                    cls.bases.append(self.classes[name])
                    continue
                imported = resolve_class(node) if resolve_class and name not in self.class_names else None
                if imported is not None:
                    cls.bases.append(imported)
                elif name not in self.class_names and name != "object" and \
                        not (self.names.qualname(node) or "").startswith("torch."):
                    # From a module we do not read, except torch: nn.Module calls no hook of its
                    # subclasses (but forward), so their uncalled methods are an API that callers run at any time.
                    cls.foreign_bases.append(self.names.qualname(node) or name)
            cls.sealed = True
        self._keep_float32_listed()
        # Decorators defined here whose wrapper runs the function with autocast switched off.
        self.autocast_off_decorators = {
            name for name, fn in self.functions.items()
            if any(isinstance(n, (ast.With, ast.AsyncWith)) and
                   any(is_autocast_off_call(item.context_expr, self.names) for item in n.items)
                   for n in walk(fn.node))}
        for fn in self.all_functions():
            fn.autocast_off = fn.autocast_off or any(self.disables_autocast(d) for d in fn.node.decorator_list)

    def _keep_float32_listed(self) -> None:
        """Mark the tensors of the classes whose instances a class here holds under a name that a
        model's keep-in-float32 list names (``_keep_in_fp32_modules_strict = ["rotary_emb"]``, or
        ``"rotary_emb.inv_freq"``): loaders keep them float32 whatever dtype they load the model
        in. An entry names the module by its last part, or one tensor by its last two; a module
        name matches a name it begins (``rotary_emb`` covers ``rotary_emb_compress``, as the
        loaders that match substrings do)."""
        entries = [e.value.split(".") for cls in self.classes.values() for item in cls.node.body
                   if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None and any(
                       isinstance(t, ast.Name) and t.id in KEEP_FLOAT32_LISTS
                       for t in (item.targets if isinstance(item, ast.Assign) else [item.target]))
                   and isinstance(item.value, (ast.List, ast.Tuple, ast.Set))
                   for e in item.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        entries = [parts for parts in entries if all(parts)]  # ("" or "model." names nothing)
        if not entries:
            return

        def kept_under(attr: str) -> Set[str]:
            return {ALL_ATTRS for parts in entries if attr.startswith(parts[-1])} | \
                {parts[-1] for parts in entries if len(parts) > 1 and attr.startswith(parts[-2])}

        for cls in self.classes.values():
            for attr, held in cls.instance_attrs.items():
                kept = kept_under(attr)
                for name in held if kept else ():
                    if name in self.classes:
                        self.classes[name].kept_float32 |= kept
            for attr, quals in self._imported_held(cls).items():
                kept = kept_under(attr)
                for qual in quals if kept else ():
                    self.kept_float32_imports.setdefault(qual, set()).update(kept)

    def _keep_float32_converted(self) -> None:
        """Mark the classes whose instances a class here converts to float32 or wider after
        construction (``self.dit.to(device, dtype=torch.float32)`` in a loader, ``self.head.float()``
        in a post-load hook): the project runs them so. In construction-only code such a
        conversion keeps nothing: a user's later ``model.to(torch.bfloat16)`` converts the module again."""
        for cls in self.classes.values():
            converted = {receiver.attr for fn in cls.methods.values() if fn.runtime for node in walk(fn.node)
                         for receiver in [widened_receiver(node, self.names)] if is_self_attr(receiver)}
            for attr in converted:
                for name in held_names(cls, attr):
                    if name in self.classes:
                        self.classes[name].kept_float32.add(ALL_ATTRS)
                for qual in self._imported_held(cls).get(attr, ()):
                    self.kept_float32_imports.setdefault(qual, set()).add(ALL_ATTRS)

    def _imported_held(self, cls: ClassInfo) -> Dict[str, Set[str]]:
        """``self.<attr> = Rotary(...)`` with a callee from another module: attr -> its qualified names."""
        held: Dict[str, Set[str]] = {}
        for item in walk(cls.node):
            if isinstance(item, ast.Assign) and isinstance(item.value, ast.Call) and \
                    tail_name(item.value.func) not in self.class_names:
                qual = self.names.qualname(item.value.func)
                for target in item.targets if qual else ():
                    if is_self_attr(target):
                        held.setdefault(target.attr, set()).add(qual)
        return held

    def builders_of_import(self, qual: str) -> List[ClassInfo]:
        """The classes here that keep or build at construction an instance of another module's
        class ``qual``, as ``holders_of`` for one of this file."""
        return [cls for cls in self.classes.values()
                if any(qual in quals for quals in self._imported_held(cls).values())
                or any(isinstance(node, ast.Call) and self.names.qualname(node.func) == qual
                       for fn in cls.methods.values() if not fn.runtime for node in walk(fn.node))]

    def holders_of(self, name: str) -> List[ClassInfo]:
        """The classes here that build an instance of the class ``name`` of this file as a part of
        their own: one they keep in ``self.<attr>``, or one their construction builds (into an
        ``nn.ModuleList``, a ``Sequential``). Converting a module converts its parts."""
        if self._holders is None:
            self._holders = {}
            for cls in self.classes.values():
                parts = {part for held in cls.instance_attrs.values() for part in held}
                parts |= {node.func.id for fn in cls.methods.values() if not fn.runtime for node in walk(fn.node)
                          if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                          and node.func.id in self.classes}
                for part in parts - {cls.name}:
                    self._holders.setdefault(part, []).append(cls)
        return self._holders.get(name, [])

    def never_defined(self, cls: ClassInfo, name: str) -> bool:
        """Whether reading ``self.<name>`` on an instance of ``cls`` raises AttributeError: every
        class of its line is defined here, undecorated, on ``nn.Module`` (or nothing) alone,
        ``nn.Module`` has no member of that name, no class of the line stores it on ``self``, and
        nothing else in this module stores an attribute of that name, defines a method or class
        attribute of it, spells it in a string, or sets attributes by computed names (or through
        ``__dict__``, ``vars`` or ``__getattr__``). (A subclass's store does not count: an
        instance of the base itself has no such attribute.)"""
        if name.startswith("_") or name in MODULE_MEMBERS:
            return False
        for c in cls.mro():
            if self.classes.get(c.name) is not c or c.node.decorator_list or c.node.keywords:
                return False
            if any(base not in self.classes and (self.names.qualname(node) or "") not in TORCH_MODULE_BASES
                   for base, node in zip(c.base_names, c.base_nodes)):
                return False
        on_self, defined, families, dynamic = self._attribute_names_used()
        return not dynamic and name not in defined and not any(name in on_self.get(id(c.node), ()) for c in cls.mro()) \
            and not any(family_matches(family, name) for family in families)

    def _attribute_names_used(self) -> Tuple[Dict[int, Set[str]], Set[str], Tuple[str, ...], bool]:
        """The names each class stores on ``self`` (by its node's id); the names the rest of this
        module gives attributes (other stores and deletes, functions, class-level names, and every
        name a whole string spells, dotted paths split); the families of names it sets by computed
        names (``register_buffer(f"{kind}_inv_freq", t)``: ``*_inv_freq``); and whether it sets
        attributes by names it does not spell at all (or through ``__dict__``, ``vars`` or
        ``__getattr__``)."""
        if self._attribute_names is None:
            on_self: Dict[int, Set[str]] = {}
            stored_on_self: Set[int] = set()
            for cls in (n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)):
                stores = [n for n in ast.walk(cls) if is_self_attr(n) and not isinstance(n.ctx, ast.Load)]
                on_self[id(cls)] = {n.attr for n in stores}
                stored_on_self.update(id(n) for n in stores)
            defined: Set[str] = set()
            families: List[str] = []
            dynamic = False
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Attribute):
                    dynamic = dynamic or node.attr == "__dict__"
                    if not isinstance(node.ctx, ast.Load) and id(node) not in stored_on_self:
                        defined.add(node.attr)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defined.add(node.name)
                    dynamic = dynamic or node.name in ("__getattr__", "__getattribute__", "__setattr__")
                    if isinstance(node, ast.ClassDef):
                        for stmt in node.body:
                            targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                                [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
                            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    defined.update(node.value.split("."))
                elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load) \
                        and isinstance(node.value, ast.Attribute) and node.value.attr in MODULE_TENSOR_DICTS:
                    family = _name_family(node.slice)  # ``self._buffers[name] = t``
                    dynamic = dynamic or family is None
                    families.extend([family] if family else [])
                elif isinstance(node, ast.Call):
                    callee = node.func.attr if isinstance(node.func, ast.Attribute) else \
                        node.func.id if isinstance(node.func, ast.Name) else None
                    dynamic = dynamic or callee == "vars"
                    if callee in ATTRIBUTE_SETTERS:
                        at = 1 if callee in ("setattr", "__setattr__") else 0
                        named = node.args[at] if len(node.args) > at else \
                            next((k.value for k in node.keywords if k.arg == "name"), None)
                        family = _name_family(named)
                        dynamic = dynamic or family is None
                        families.extend([family] if family else [])
            self._attribute_names = (on_self, defined, tuple(families), dynamic)
        return self._attribute_names

    def _is_record(self, node: ast.ClassDef) -> bool:
        """A ``@dataclass`` (called or not) or a ``typing.NamedTuple`` subclass."""
        decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
        return any(self.names.qualname(d) == "dataclasses.dataclass" for d in decorators) or \
            any(self.names.qualname(b) == "typing.NamedTuple" for b in node.bases)

    def _sharded_inputs_dtype(self, fn: FunctionInfo) -> Optional[str]:
        """What ``fn`` has FSDP2 cast its own instance's forward arguments to: it shards its first
        parameter (``fully_shard(self, mp_policy=policy)``) with a policy that sets a 16-bit param
        dtype, or that a caller passes (``**fsdp_kwargs``, a policy built elsewhere)."""
        params = [*fn.node.args.posonlyargs, *fn.node.args.args]
        if not params or is_static(fn.node):
            return None
        policies = {target.id: stmt.value for stmt in walk(fn.node) if isinstance(stmt, ast.Assign)
                    for target in stmt.targets if isinstance(target, ast.Name)}
        for call in walk(fn.node):
            if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Name) \
                    and call.args[0].id == params[0].arg and self.names.qualname(call.func) in FULLY_SHARD:
                policy = next((k.value for k in call.keywords if k.arg == "mp_policy"), None)
                if policy is None:  # only what ``**kwargs`` may carry
                    dtype = "param_dtype" if any(k.arg is None for k in call.keywords) else None
                else:
                    dtype = self._policy_dtype(policies.get(policy.id, policy) if isinstance(policy, ast.Name) else policy)
                if dtype is not None:
                    return dtype
        return None

    def _policy_dtype(self, policy: ast.AST) -> Optional[str]:
        if not (isinstance(policy, ast.Call) and self.names.qualname(policy.func) in MIXED_PRECISION_POLICIES):
            return "param_dtype"  # a policy made elsewhere
        given = {k.arg: k.value for k in policy.keywords}
        cast_inputs = given.get("cast_forward_inputs", policy.args[3] if len(policy.args) > 3 else None)
        dtype = given.get("param_dtype", policy.args[0] if policy.args else None)
        if dtype is None or is_none(dtype) or (isinstance(cast_inputs, ast.Constant) and cast_inputs.value is False):
            return None
        qual = self.names.qualname(dtype)
        if qual in DTYPES:
            return qual.rsplit(".", 1)[1] if DTYPES[qual] is Prec.LOW else None
        return "param_dtype"

    def disables_autocast(self, decorator: ast.AST) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return is_autocast_off_call(decorator, self.names) or (
            isinstance(target, ast.Name) and target.id in self.autocast_off_decorators)

    def collect_stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = FunctionInfo(stmt, stmt.name)
            fn.autocast_off = any(is_autocast_off_call(d, self.names) for d in stmt.decorator_list)
            self.functions[stmt.name] = fn
        elif isinstance(stmt, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else tail_name(b) for b in stmt.bases]
            cls = ClassInfo(stmt, stmt.name, bases, base_nodes=list(stmt.bases))
            nested = []
            for item in flattened(stmt.body):
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    fn = FunctionInfo(item, f"{stmt.name}.{item.name}", weakref.ref(cls))
                    fn.autocast_off = any(is_autocast_off_call(d, self.names) for d in item.decorator_list)
                    cls.methods[item.name] = fn
                elif isinstance(item, ast.ClassDef):
                    nested.append(item)
            self.classes.setdefault(stmt.name, cls)
            for item in nested:  # a class in a class body is analysed like one at module level
                self.collect_stmt(item)
            for name in CONVERSION_HOOKS & set(cls.methods):
                cls.restored_attrs |= attrs_written(cls.methods[name].node)
            if "__init__" not in cls.methods and self._is_record(stmt):
                cls.record_fields = tuple(item.target.id for item in stmt.body if isinstance(item, ast.AnnAssign)
                                          and isinstance(item.target, ast.Name))
            cls.sharding_methods = {name: dtype for name, fn in cls.methods.items()
                                    for dtype in [self._sharded_inputs_dtype(fn)] if dtype is not None}
            for item in walk(stmt):
                held = self._held_classes(item)
                if held:
                    for target in (item.targets if isinstance(item, ast.Assign) else [item.target]):
                        if is_self_attr(target):
                            cls.instance_attrs[target.attr] = held
            for fn in cls.methods.values():
                self._hold_annotated_parameters(fn.node, cls)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) \
                and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id in self.classes \
                and isinstance(stmt.value, ast.Name) and stmt.value.id in self.functions:
            # ``Rotary._set_cos_sin_cache = patched``: a function of this file installed as a method
            # of a class of this file (a patch package's idiom); it runs with the instance as self.
            cls, name = self.classes[stmt.targets[0].value.id], stmt.targets[0].attr
            fn = FunctionInfo(self.functions[stmt.value.id].node, f"{cls.name}.{name}", weakref.ref(cls))
            fn.autocast_off = self.functions[stmt.value.id].autocast_off
            cls.methods[name] = fn
        else:
            for block in nested_blocks(stmt):
                for child in block:
                    self.collect_stmt(child)

    def _hold_annotated_parameters(self, function: ast.AST, cls: ClassInfo) -> None:
        """``self.biases = biases`` with ``biases: Optional[Biases]`` a parameter: the instance held
        is of that class of this file (one a caller builds and hands in)."""
        if isinstance(function, ast.Lambda):
            return
        spec = function.args
        names = {arg.arg: next((p.id for p in annotation_parts(arg.annotation) if isinstance(p, ast.Name)), None)
                 for arg in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
        annotated = {name: held for name, held in names.items() if held in self.class_names}
        if not annotated:
            return
        for item in walk(function):
            if isinstance(item, ast.Assign) and isinstance(item.value, ast.Name) and item.value.id in annotated:
                for target in item.targets:
                    if is_self_attr(target):
                        cls.instance_attrs.setdefault(target.attr, (annotated[item.value.id],))

    def _held_classes(self, stmt: ast.AST) -> Tuple[str, ...]:
        """The classes of this file whose instance ``self.x = ...`` keeps: the class called
        (``Impl(...)``), the class annotated (``self.x: Impl = ...``), the classes that a
        module-level table maps to (``_IMPLS[kind](...)``, ``_IMPLS = {"a": Impl, ...}``), or those
        a factory function of this file returns (``build_rope(...)``: the rotary or a no-op)."""
        if isinstance(stmt, ast.AnnAssign):
            name = tail_name(stmt.annotation)
            return (name,) if name in self.class_names else ()
        if not isinstance(stmt, ast.Assign):
            return ()
        return self._built_classes(stmt.value)

    def _built_classes(self, value: ast.AST) -> Tuple[str, ...]:
        if isinstance(value, ast.IfExp):  # ``Rotary(d) if use_rotary else None``: either branch's
            return tuple(dict.fromkeys(self._built_classes(value.body) + self._built_classes(value.orelse)))
        if not isinstance(value, ast.Call):
            return ()
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in MODULE_RETURNING_SELF and isinstance(func.value, ast.Call):
            return self._built_classes(func.value)  # ``Fourier(n).to(dtype=torch.float32)``: the module itself
        if isinstance(func, ast.Name) and func.id in self.class_names:
            return (func.id,)
        if isinstance(func, ast.Name) and func.id in self._class_aliases():
            # ``Impl = _LegacyImpl`` after an optional import, ``cls = A if flag else B``
            return tuple(sorted(self._class_aliases()[func.id]))
        if self.names.qualname(func) in LINEAR_MODULES:
            return (self.names.qualname(func),)
        if isinstance(func, ast.Name):
            return self._factories().get(func.id, ())
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
            return tuple(dict.fromkeys(self._class_tables().get(func.value.id, ())))
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Call) and not func.value.args \
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "globals":
            return self._classes_named_in_strings()
        return ()

    def _classes_named_in_strings(self) -> Tuple[str, ...]:
        """``globals()[name]``: the module-level classes whose names a string of this module spells
        (``model_type="SongUNet"``), the only names such a lookup can be given."""
        spelled = {node.value for node in ast.walk(self.tree) if isinstance(node, ast.Constant)
                   and isinstance(node.value, str)}
        return tuple(stmt.name for stmt in flattened(self.tree.body)
                     if isinstance(stmt, ast.ClassDef) and stmt.name in spelled)

    def factories_of(self, cls: str) -> List[str]:
        """The module-level functions of this file that may return an instance of ``cls``."""
        return [name for name, classes in self._factories().items() if cls in classes]

    def phases_of_method_calls(self, producers: Set[str], method: str) -> Optional[Set[bool]]:
        """The phases in which this module's classes call ``method`` on an instance they hold in
        ``self.<attr>``, built by a call of one of ``producers`` (qualified names of another
        module's class and its factories): None where none does, or a caller's phase is unknown."""
        phases: Set[bool] = set()
        for cls in self.classes.values():
            held = {target.attr for node in walk(cls.node) if isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Call) and self.names.qualname(node.value.func) in producers
                    for target in node.targets if is_self_attr(target)}
            if not held:
                continue
            for fn in cls.methods.values():
                for node in walk(fn.node):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr == method and is_self_attr(node.func.value) \
                            and node.func.value.attr in held:
                        if fn.runtime and not fn.phase_known:
                            return None
                        phases.add(fn.runtime)
        return phases or None

    def _factories(self) -> Dict[str, Tuple[str, ...]]:
        """Module-level functions whose every ``return`` builds an instance of a class of this file
        (or returns None): the classes each may return."""
        if self._factory_classes is None:
            self._factory_classes = {}
            for stmt in flattened(self.tree.body):
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                returned = [node.value for node in walk(stmt) if isinstance(node, ast.Return)]
                built = [tail_name(v.func) for v in returned if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                         and v.func.id in self.class_names]
                nothing = [v for v in returned if v is None or (isinstance(v, ast.Constant) and v.value is None)]
                if built and len(built) + len(nothing) == len(returned):
                    self._factory_classes[stmt.name] = tuple(dict.fromkeys(built))
        return self._factory_classes

    def _class_tables(self) -> Dict[str, List[str]]:
        """Module-level dicts whose values are all classes of this file: dispatch tables."""
        if self._tables is None:
            self._tables = {}
            for stmt in self.tree.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict) and stmt.value.values and all(
                        isinstance(v, ast.Name) and v.id in self.class_names for v in stmt.value.values):
                    for target in stmt.targets:
                        if isinstance(target, ast.Name):
                            self._tables[target.id] = [v.id for v in stmt.value.values]
        return self._tables

    def compute_runtime(self, phases_elsewhere: Optional[Callable[..., Optional[Set[bool]]]]) -> None:
        """A function is construction-only when it is a construction root, or every caller
        in this module is construction-only. Everything else may run in the forward path.
        ``phases_elsewhere``: a free function -> the phases (``runtime`` flags) its callers in other
        modules run in (not kept, as ``resolve_class``)."""
        all_fns = self.all_functions()
        self.subclasses: Dict[str, List[ClassInfo]] = {}
        for cls in self.classes.values():
            for base in cls.mro()[1:]:
                self.subclasses.setdefault(base.name, []).append(cls)
        stored = self._stored_callables()
        deferred = {id(node) for lambdas in stored.values() for _, lam in lambdas for node in walk(lam)}
        for fn in all_fns:
            for callee in self.syntactic_callees(fn, deferred):
                if callee is not fn:  # recursion alone does not make a function someone else's helper
                    callee.callers.add(fn.qual)
        for (cls, attr), lambdas in stored.items():
            callers = [m.qual for m in cls.methods.values() if any(
                isinstance(c, ast.Call) and is_self_attr(c.func) and c.func.attr == attr for c in walk(m.node))]
            for method, lam in lambdas:
                for callee in self.syntactic_callees(method, within=lam):
                    callee.callers.update(callers or [STORED_CALLABLE])
        for call in index_module(self.tree).top_level_calls:
            callee = self.functions.get(tail_name(call.func)) if isinstance(call.func, ast.Name) else None
            if callee:
                callee.callers.add("<module>")
        by_qual = {fn.qual: fn for fn in all_fns}
        roots = {"<module>", CALLED_ELSEWHERE_AT_CONSTRUCTION}
        roots |= {fn.qual for fn in all_fns if fn.name in CONSTRUCTION_ROOTS and fn.cls}
        roots |= self._calls_from_imported_bases()
        roots |= self._calls_from_library_bases()
        if phases_elsewhere is not None:
            for fn in self.functions.values():
                if not fn.callers:  # a free function this module never calls: maybe its package does
                    fn.callers |= {CALLED_ELSEWHERE_AFTER_CONSTRUCTION if runtime else CALLED_ELSEWHERE_AT_CONSTRUCTION
                                   for runtime in phases_elsewhere(fn, (), self.reached_from(fn)) or ()}
        construction = _closed_under_callers(all_fns, roots)
        if phases_elsewhere is not None:
            # A method only construction calls here (``update()`` from ``__init__``) may be called
            # by the modules that hold an instance, after construction (a parent's forward).
            found_elsewhere = False
            for fn in all_fns:
                if fn.cls is not None and fn.qual in construction and fn.name not in CONSTRUCTION_ROOTS \
                        and fn.callers and True in (phases_elsewhere(fn, [fn.cls.name] + self.factories_of(fn.cls.name))
                                                    or ()):
                    fn.callers.add(CALLED_ELSEWHERE_AFTER_CONSTRUCTION)
                    found_elsewhere = True
            if found_elsewhere:
                construction = _closed_under_callers(all_fns, roots)
        for qual, fn in by_qual.items():
            fn.runtime = qual not in construction
            fn.phase_known = not (fn.cls is not None and not fn.callers and fn.name not in ("forward", "__call__")
                                  and any(c.foreign_bases for c in fn.cls.mro()))

    def _calls_from_imported_bases(self) -> Set[str]:
        """``self.m()`` in a method of a base class from another module calls the overrides of
        ``m`` here: record those callers. Returns the ones that run only at construction there."""
        local = {id(c) for c in self.classes.values()}
        construction = set()
        for cls in self.classes.values():
            for base in cls.mro()[1:]:
                if id(base) in local:
                    continue
                for method in base.methods.values():
                    caller = f"<imported {base.name}.{method.name}>"
                    for attr in method.self_attrs_read() & set(cls.methods):
                        cls.methods[attr].callers.add(caller)
                        if not method.runtime:
                            construction.add(caller)
        return construction

    def _calls_from_library_bases(self) -> Set[str]:
        """A library base whose methods call hooks its subclasses override (LIBRARY's ``hf-rotary``):
        record those callers of the overrides here, for each base method that runs on the class
        (none here overrides it without calling ``super()``). Returns the ones that run only at construction."""
        construction = set()
        for cls in self.classes.values():
            for qual in dict.fromkeys(q for c in cls.mro() for q in c.foreign_bases):
                summary = LIBRARY.get(qual)
                for method, runtime, hook in summary.hooks if summary is not None else ():
                    override, target = cls.lookup_method(method), cls.lookup_method(hook)
                    if target is None or (override is not None and not _extends(override, method)):
                        continue
                    caller = f"<{qual}.{method}>"
                    target.callers.add(caller)
                    if not runtime:
                        construction.add(caller)
        return construction

    def phases_of_calls(self, qual: str) -> Optional[Set[bool]]:
        """The phases (``runtime`` flags of the callers) in which this module calls the function
        of another module named ``qual``: False for a call at import or from construction-only
        code, True for one from code that runs after construction. None when there is no call,
        when a caller's own phase is unknown here (a free function this module never calls), or
        when the function is used as a value (passed on, decorating, stored): where it runs then
        is not where it is named."""
        phases: Set[bool] = set()
        called: Set[int] = set()
        for call in index_module(self.tree).top_level_calls:
            if self.names.qualname(call.func) == qual:
                phases.add(False)
                called.add(id(call.func))
        for fn in self.all_functions():
            for node in walk(fn.node):
                if isinstance(node, ast.Call) and self.names.qualname(node.func) == qual:
                    if fn.runtime and not (fn.phase_known and (fn.cls is not None or fn.callers)):
                        return None
                    phases.add(fn.runtime)
                    called.add(id(node.func))
        mentions = (node for node in ast.walk(self.tree) if isinstance(node, (ast.Name, ast.Attribute))
                    and isinstance(node.ctx, ast.Load) and id(node) not in called)
        if not phases or any(self.names.qualname(node) == qual for node in mentions):
            return None
        return phases

    def all_functions(self) -> List[FunctionInfo]:
        return list(self.functions.values()) + [m for c in self.classes.values() for m in c.methods.values()]

    def entry_points(self) -> List[FunctionInfo]:
        out = []
        for fn in self.functions.values():
            if fn.callers <= CALLED_ELSEWHERE:
                out.append(fn)
        for cls in self.classes.values():
            for fn in cls.methods.values():
                if not fn.callers or fn.name in CONSTRUCTION_ROOTS:
                    out.append(fn)
        # Construction first, so that attributes exist when forward reads them.
        out.sort(key=lambda f: (f.runtime, f.qual))
        return out

    def instantiation_arguments(self, init: FunctionInfo) -> Optional[Dict[str, List[Optional[ast.AST]]]]:
        """For each parameter of the constructor ``init``, what every instantiation of its class in
        this module passes (None where a call leaves the default, :data:`UNPACKED_ARGUMENT` where
        ``**kwargs`` may pass it). None when the module never instantiates the class, or a call
        unpacks ``*args``. A demo under
        ``if __name__ == "__main__":`` is an example, not the module's own use: it does not count."""
        cls = init.cls
        if cls is None or self.classes.get(cls.name) is not cls or isinstance(init.node, ast.Lambda):
            return None
        demo = self._demo_nodes()
        names = [cls.name] + [alias for alias, classes in self._class_aliases().items() if cls.name in classes]
        calls = [c for name in names for c in index_module(self.tree).calls_by_name.get(name, ()) if id(c) not in demo]
        calls += [c for c in self._class_attribute_calls(cls.name) if id(c) not in demo]
        return _passed_by(init.node, [self._with_literal_keywords(c) for c in calls])

    def _class_attribute_calls(self, name: str) -> List[ast.Call]:
        """``self.<attr>(...)`` in the methods of this file's classes whose line binds the class
        ``name`` in its body (``closure_model = Closure``): each builds an instance."""
        calls = []
        for holder in self.classes.values():
            line = [c for c in holder.mro() if self.classes.get(c.name) is c]
            attrs = {target.id for c in line for item in c.node.body if isinstance(item, ast.Assign)
                     and isinstance(item.value, ast.Name) and item.value.id == name
                     for target in item.targets if isinstance(target, ast.Name)}
            calls += [node for c in line if attrs for method in c.methods.values() for node in walk(method.node)
                      if isinstance(node, ast.Call) and is_self_attr(node.func) and node.func.attr in attrs]
        return calls

    def _with_literal_keywords(self, call: ast.Call) -> ast.Call:
        """``call`` with ``**kw`` spelled out where ``kw`` is a local its function sets once to
        literal keywords (``kw = dict(dim=dim, heads=heads)``, ``{"dim": dim}``): what it passes is known."""
        unpacked = [k for k in call.keywords if k.arg is None]
        if not unpacked:
            return call
        scope = self._function_around(call.lineno)
        keywords = [k for k in call.keywords if k.arg is not None]
        for keyword in unpacked:
            spelled = _literal_keyword_dict(scope, keyword.value) if scope is not None else None
            if spelled is None:
                return call
            keywords.extend(spelled)
        return ast.Call(func=call.func, args=call.args, keywords=keywords, lineno=call.lineno,
                        col_offset=call.col_offset)

    def _class_aliases(self) -> Dict[str, Set[str]]:
        """Names bound to classes of this file (``attn_class = CausalAttention if causal else
        Attention``): a call of one instantiates any of them."""
        if self._aliases is None:
            self._aliases = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    options = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
                    # (by the names of every class in the file: asked while the classes are collected)
                    if all(isinstance(o, ast.Name) and o.id in self.class_names for o in options) \
                            and node.targets[0].id not in self.class_names:
                        self._aliases.setdefault(node.targets[0].id, set()).update(o.id for o in options)
        return self._aliases

    def imported_instantiation_arguments(self, init: ast.AST, qual: str) -> Optional[Dict[str, List[Optional[ast.AST]]]]:
        """As :meth:`instantiation_arguments`, for the class of another module named ``qual``
        (``init`` its constructor) as this module instantiates it, empty where it never does; None
        also where this module names the class otherwise (subclasses it, passes it on): those
        instances are built elsewhere."""
        demo = self._demo_nodes()
        # ``assert Rotary is not None`` (after an optional import) asks about the class, passes nothing on
        asked = {id(operand) for node in ast.walk(self.tree) if isinstance(node, ast.Compare)
                 and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
                 for operand in (node.left, *node.comparators)}
        named = {id(node) for node in ast.walk(self.tree) if isinstance(node, (ast.Name, ast.Attribute))
                 and isinstance(node.ctx, ast.Load) and self.names.qualname(node) == qual and id(node) not in asked}
        calls = [node for node in ast.walk(self.tree) if isinstance(node, ast.Call) and id(node.func) in named
                 and id(node) not in demo]
        if len(calls) < len(named):  # named otherwise too (or only in a demo)
            return None
        passed = _passed_by(init, calls) if calls else {}
        return {param: [self._built_class(node) for node in nodes] for param, nodes in passed.items()} \
            if passed is not None else None

    def _built_class(self, node: Optional[ast.AST]) -> Optional[ast.AST]:
        """A passed argument that builds a class this module imports or defines (``Sampler(
        transformer=Backbone())`` in a driver): a call marked with the class's qualified name
        (``HOST_BUILT``), which the module analysing the constructor resolves; any other as it is."""
        if not isinstance(node, ast.Call):
            return node
        qual = self.names.qualname(node.func) or self._class_named_once(node.func)
        if not qual or qual.startswith("torch."):
            return node
        built = ast.Call(func=node.func, args=[], keywords=[])
        ast.copy_location(built, node)
        setattr(built, HOST_BUILT, qual)
        return built

    def _function_around(self, line: int) -> Optional[ast.AST]:
        """The innermost function of this module whose body holds ``line``."""
        return max((f for f in walk(self.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and f.lineno <= line <= (f.end_lineno or f.lineno)), key=lambda f: f.lineno, default=None)

    def _class_named_once(self, name: ast.AST) -> Optional[str]:
        """The qualified name of the class that a local of the function around ``name`` is bound to
        once (``model_cls = DiT``), else None."""
        if not isinstance(name, ast.Name):
            return None
        scope = self._function_around(name.lineno)
        bound = [node.value for node in walk(scope) if isinstance(node, (ast.Assign, ast.AnnAssign))
                 and any(isinstance(t, ast.Name) and t.id == name.id
                         for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))] \
            if scope is not None else []
        return self.names.qualname(bound[0]) if len(bound) == 1 and isinstance(bound[0], (ast.Name, ast.Attribute)) \
            else None

    def _demo_nodes(self) -> Set[int]:
        """The ids of the nodes under the module's ``if __name__ == "__main__":`` blocks."""
        if self._demo is None:
            self._demo = {id(node) for stmt in self.tree.body if isinstance(stmt, ast.If) and _is_main_guard(stmt.test)
                          for part in stmt.body for node in ast.walk(part)}
        return self._demo

    def calls_in(self, node: ast.AST) -> Iterable[ast.Call]:
        """The calls under ``node`` (a function or lambda), nested functions included."""
        return [child for child in walk(node) if isinstance(child, ast.Call)]

    def _stored_callables(self) -> Dict[Tuple[ClassInfo, str], List[Tuple[FunctionInfo, ast.AST]]]:
        """Lambdas and bound methods that a method stores in ``self.<attr>`` (``self.basis = lambda
        t: fourier(t, n)``, ``self.forward = self._forward_mistral``; one per branch of an ``if`` or
        not), with the method: what they call runs where ``self.<attr>(...)`` is called (for
        ``forward``, where the module is called), not where they are written."""
        stored: Dict[Tuple[ClassInfo, str], List[Tuple[FunctionInfo, ast.AST]]] = {}
        for cls in self.classes.values():
            for method in cls.methods.values():
                for node in walk(method.node):
                    if isinstance(node, ast.Assign) and (isinstance(node.value, ast.Lambda) or (
                            is_self_attr(node.value) and cls.lookup_method(node.value.attr) is not None)):
                        for target in node.targets:
                            if is_self_attr(target):
                                stored.setdefault((cls, target.attr), []).append((method, node.value))
        return stored

    def reached_from(self, fn: FunctionInfo) -> List[FunctionInfo]:
        """The module's functions that ``fn`` calls, directly or through one another."""
        reached: Dict[int, FunctionInfo] = {id(fn.node): fn}
        todo = [fn]
        while todo:
            for callee in self.syntactic_callees(todo.pop()):
                if id(callee.node) not in reached:
                    reached[id(callee.node)] = callee
                    todo.append(callee)
        return [f for f in reached.values() if f is not fn]

    def syntactic_callees(self, fn: FunctionInfo, skipped: Set[int] = frozenset(),
                          within: Optional[ast.AST] = None) -> Iterable[FunctionInfo]:
        """What ``fn`` calls (or, with ``within``, the part of it under that node), leaving out
        the nodes whose ids are ``skipped``."""
        if fn.cls is not None:
            # A method passed on as a value (``self.apply(self._init_weights)``, ``build = self._build``)
            # runs where the code that mentions it runs, however it is finally called.
            for node in walk(within or fn.node):
                if id(node) in skipped:
                    continue
                if is_self_attr(node) and isinstance(node.ctx, ast.Load):
                    method = fn.cls.lookup_method(node.attr)
                    if method is not None:
                        yield method
        for call in self.calls_in(within or fn.node):
            if id(call) in skipped:
                continue
            func = call.func
            if isinstance(func, ast.Name):
                if func.id in self.functions:
                    yield self.functions[func.id]
            elif isinstance(func, ast.Attribute) and fn.cls is not None:
                owner = func.value
                if isinstance(owner, ast.Name) and owner.id == "self":
                    m = fn.cls.lookup_method(func.attr)
                    if m:
                        yield m
                    # ``self.m()`` in a base class also calls the overrides of its subclasses.
                    for sub in self.subclasses.get(fn.cls.name, ()):
                        if func.attr in sub.methods:
                            yield sub.methods[func.attr]
                    for inst in lookup_instances(fn.cls, func.attr, self.classes):
                        if inst.lookup_method("forward"):
                            yield inst.lookup_method("forward")
                elif is_self_attr(owner):
                    for inst in lookup_instances(fn.cls, owner.attr, self.classes):
                        m = inst.lookup_method(func.attr)
                        if m:
                            yield m
                elif (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                      and owner.func.id == "super"):
                    for base in fn.cls.direct_bases():
                        m = base.lookup_method(func.attr)
                        if m:
                            yield m
                            break


_MAIN_GUARD_SIDES = {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


def _is_main_guard(test: ast.AST) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and \
        {ast.dump(test.left), ast.dump(test.comparators[0])} == _MAIN_GUARD_SIDES


# What an instantiation that unpacks ``**kwargs`` passes to a parameter it does not name: not a literal.
UNPACKED_ARGUMENT = ast.Name(id="**kwargs", ctx=ast.Load())


# Marks an argument another module passes that builds a class, with the class's qualified name
# (see ModuleModel._built_class): the one kind of another module's argument resolved elsewhere.
HOST_BUILT = "poslint_host_built"


def _extends(override: FunctionInfo, method: str) -> bool:
    """Whether an override calls the method it overrides (``super().m(...)``, ``Base.m(self, ...)``)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
               and not is_self_attr(node.func) for node in walk(override.node))


def _closed_under_callers(functions: List[FunctionInfo], construction: Set[str]) -> Set[str]:
    """``construction`` with every function whose callers are all in it, repeatedly."""
    construction = set(construction)
    changed = True
    while changed:
        changed = False
        for fn in functions:
            if fn.qual not in construction and fn.callers and fn.callers <= construction:
                construction.add(fn.qual)
                changed = True
    return construction


def _literal_keyword_dict(scope: ast.AST, name: ast.AST) -> Optional[List[ast.keyword]]:
    """The keywords that the local ``name`` holds where ``scope`` binds it once, to ``dict(k=v, ...)``
    or ``{"k": v, ...}``; None otherwise."""
    if not isinstance(name, ast.Name):
        return None
    bound = [n for n in ast.walk(scope) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr))
             and any(isinstance(t, ast.Name) and t.id == name.id
                     for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    mutated = any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name.id
                  and isinstance(n.ctx, ast.Store) for n in ast.walk(scope)) or any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and n.func.value.id == name.id for n in ast.walk(scope))  # (kw["rotary"] = ..., kw.update(...))
    if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or mutated:
        return None
    value = bound[0].value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and not value.args \
            and all(k.arg is not None for k in value.keywords):
        return list(value.keywords)
    if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
        return [ast.keyword(arg=k.value, value=v) for k, v in zip(value.keys, value.values)]
    return None


def _passed_by(init: ast.AST, calls: List[ast.Call]) -> Optional[Dict[str, List[Optional[ast.AST]]]]:
    """For each parameter of the constructor ``init``, what each of ``calls`` passes (None where it
    leaves the default, :data:`UNPACKED_ARGUMENT` where ``**kwargs`` may pass it); None when there
    is no call, or one unpacks ``*args``."""
    if not calls:
        return None
    spec = init.args
    params = [p.arg for p in (list(spec.posonlyargs) + list(spec.args))[1:] + list(spec.kwonlyargs)]
    passed: Dict[str, List[Optional[ast.AST]]] = {name: [] for name in params}
    for call in calls:
        # ``**kw`` may pass any parameter the call does not name: those are unknown.
        unpacked = any(k.arg is None for k in call.keywords)
        named = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg is not None]) \
            if unpacked else call
        bound = bound_arguments(init, named)
        if bound is None:
            return None
        for name in params:
            passed[name].append(bound.get(name, UNPACKED_ARGUMENT if unpacked else None))
    return passed


def bound_arguments(init: ast.AST, call: ast.Call, with_defaults: bool = False) -> Optional[Dict[str, ast.AST]]:
    """The expression ``call`` passes to each parameter of the constructor ``init`` that it binds
    (``self`` left out), and with ``with_defaults`` the default of each it leaves; None when it
    unpacks ``*args`` or ``**kwargs``, or passes more positional arguments than there are
    parameters."""
    spec = init.args
    positional = (list(spec.posonlyargs) + list(spec.args))[1:]
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in call.args) or \
            (len(call.args) > len(positional) and spec.vararg is None):
        return None
    bound = {param.arg: arg for param, arg in zip(positional, call.args)}
    names = {p.arg for p in positional[len(call.args):]} | {p.arg for p in spec.kwonlyargs}
    bound.update((name, value) for name, value in keywords.items() if name in names)
    if with_defaults:  # a parameter the call leaves gets its default
        given = list(zip(positional[len(positional) - len(spec.defaults):], spec.defaults)) + \
            [(p, d) for p, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None]
        for param, default in given:
            bound.setdefault(param.arg, default)
    return bound


def _name_family(node: Optional[ast.AST]) -> Optional[str]:
    """The attribute names a string expression spells, as a family (``f"{kind}_inv_freq"`` ->
    ``*_inv_freq``, ``"freq_" + axis`` and ``"freq_{}".format(axis)`` -> ``freq_*``); None where
    it spells no part of them."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        name = "".join(v.value if isinstance(v, ast.Constant) else WILDCARD for v in node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        name = (_name_family(node.left) or WILDCARD) + (_name_family(node.right) or WILDCARD)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
        name = re.sub(r"\{[^{}]*\}", WILDCARD, node.func.value.value)
    else:
        return None
    return name if name.replace(WILDCARD, "") else None


def parameter_attrs(init: FunctionInfo) -> Dict[str, str]:
    """The attributes that the constructor ``init`` sets straight from one of its parameters
    (``self.normalize = normalize``), that parameter never rebound and the attribute set nowhere
    else in its class: attribute -> parameter. What an instance holds there is what it was
    built with. Found once per constructor: every read of an attribute of such an instance asks."""
    if init._parameter_attrs is None:
        init._parameter_attrs = _parameter_attrs(init)
    return init._parameter_attrs


def built_from_parameters(init: FunctionInfo) -> Dict[str, ast.Call]:
    """The attributes that the constructor ``init`` sets to a call passing one of its parameters
    as it came (``self.attn = Attention(dim, rotary=rotary)``), set nowhere else: attribute -> the
    call. A module an instance was handed is what the module built there holds in turn."""
    if init._built_attrs is None:
        init._built_attrs = _attrs_set_once(init, lambda value, params: isinstance(value, ast.Call) and any(
            isinstance(arg, ast.Name) and arg.id in params for arg in (*value.args, *(k.value for k in value.keywords))))
    return init._built_attrs


def _parameter_attrs(init: FunctionInfo) -> Dict[str, str]:
    found = _attrs_set_once(init, lambda value, params: isinstance(value, ast.Name) and value.id in params)
    return {attr: value.id for attr, value in found.items()}


def _attrs_set_once(init: FunctionInfo, from_parameters: Callable[[ast.AST, Set[str]], bool]) -> Dict[str, ast.AST]:
    """The attributes the constructor ``init`` assigns exactly once, nowhere else in its class, to
    a value that ``from_parameters`` accepts given its parameters never rebound: attribute -> value."""
    cls = init.cls
    if cls is None or isinstance(init.node, ast.Lambda):
        return {}
    spec = init.node.args
    params = {p.arg for p in list(spec.posonlyargs) + list(spec.args)[1:] + list(spec.kwonlyargs)}
    rebound = {n.id for n in walk(init.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    direct: Dict[str, ast.AST] = {}
    for node in walk(init.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and is_self_attr(node.targets[0]) \
                and from_parameters(node.value, params - rebound):
            direct[node.targets[0].attr] = node.value
    if not direct:
        return {}
    elsewhere = {name for owner in cls.mro() for method in owner.methods.values() if method is not init
                 for name in attrs_written(method.node)}
    stores = [n for n in walk(init.node) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call))]
    return {attr: value for attr, value in direct.items()
            if not any(name == attr or family_matches(name, attr) for name in elsewhere)
            and sum(_writes(store, attr) for store in stores) == 1}


def _writes(node: ast.AST, attr: str) -> bool:
    """Whether the statement or call ``node`` writes ``self.<attr>`` (or a family holding it)."""
    if isinstance(node, ast.Call):
        written = attrs_written(ast.Expr(value=node))
    elif isinstance(node, ast.Assign):
        written = {t.attr for t in node.targets if is_self_attr(t)}
    else:
        written = {node.target.attr} if is_self_attr(node.target) else set()
    return any(name == attr or family_matches(name, attr) for name in written)


def literal_defaults(cls: ClassInfo) -> Dict[str, object]:
    """The attributes a (configuration) class gives literal numbers, or None, by default: class-level
    ``max_position_embeddings: int = 2048`` (dataclass style), and ``__init__`` parameters with a
    literal default that the constructor stores under their own name (``self.x = x``). A subclass's
    default wins over its bases'. Booleans are not numbers here."""
    defaults: Dict[str, object] = {}
    for owner in reversed(cls.mro()):
        for stmt in flattened(owner.node.body):
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else (
                stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None)
            if isinstance(target, ast.Name) and (_literal_number(stmt.value) is not None or is_none(stmt.value)):
                defaults[target.id] = _literal_number(stmt.value)
        init = owner.methods.get("__init__")
        if init is None or isinstance(init.node, ast.Lambda):
            continue
        spec = init.node.args
        positional = list(spec.posonlyargs) + list(spec.args)
        pairs = list(zip(positional[len(positional) - len(spec.defaults):], spec.defaults)) + \
            [(p, d) for p, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None]
        literal = {p.arg: _literal_number(d) for p, d in pairs if _literal_number(d) is not None or is_none(d)}
        for node in ast.walk(init.node):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in literal:
                for target in node.targets:
                    if is_self_attr(target) and target.attr == node.value.id:
                        defaults[target.attr] = literal[node.value.id]
    return defaults


def annotated_float(annotation: Optional[ast.AST]) -> bool:
    """``float``, ``Optional[float]`` or ``float | None``: a Python float where it is given."""
    parts = [p for p in annotation_parts(annotation) if not is_none(p)]
    return len(parts) == 1 and isinstance(parts[0], ast.Name) and parts[0].id == "float"


def float_fields(cls: ClassInfo) -> FrozenSet[str]:
    """The class-level fields of a (configuration) class annotated as floats with a None default
    (``rope_scale: Optional[float] = None``), of it or a base."""
    return frozenset(stmt.target.id for owner in cls.mro() for stmt in flattened(owner.node.body)
                     if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                     and is_none(stmt.value) and annotated_float(stmt.annotation))


def is_none(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _literal_number(node: Optional[ast.AST]) -> Optional[object]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None
