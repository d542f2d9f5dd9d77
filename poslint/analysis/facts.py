"""What the interpreter observed, as records that rules query. Rules never walk the tree
for these patterns themselves."""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Set, Tuple

from poslint.analysis.lattice import FROZEN_PARAMETER, Role, Value
from poslint.analysis.subtrees import node_ids
from poslint.analysis.torch_api import CUDA_AUTOCAST_LOWERED, METADATA

if TYPE_CHECKING:
    from poslint.analysis.names import ImportResolver
    from poslint.core.source import LineIndex

NodeKey = Tuple[int, int, int, int]

# A computed attribute name (``f"{kind}_inv_freq"``) names a family of attributes; each unknown
# part is a wildcard: ``"*_inv_freq"``.
WILDCARD = "*"


def family_matches(key: str, name: str) -> bool:
    """Whether attribute ``key`` and attribute ``name`` can be the same (either may be a family)."""
    if key == name:
        return True
    if WILDCARD not in key and WILDCARD not in name:
        return False
    if WILDCARD in name and WILDCARD not in key:
        key, name = name, key
    pattern = "".join(".+" if part == WILDCARD else re.escape(part) for part in re.split(r"(\*)", key))
    return re.fullmatch(pattern, name.replace(WILDCARD, "x")) is not None


def _metadata_read(parent: Optional[ast.AST]) -> bool:
    """``self.buf.dtype``, ``.device``, ``.shape``: a read that uses no values."""
    return isinstance(parent, ast.Attribute) and parent.attr in METADATA


class AttrIndex:
    """Facts about module attributes by class and name; computed names (families) are matched."""

    def __init__(self, entries: Iterable[Tuple[str, str, object]]):
        self.exact: Dict[Tuple[str, str], list] = {}
        for cls, name, entry in entries:
            self.exact.setdefault((cls, name), []).append(entry)
        self.families = [key for key in self.exact if WILDCARD in key[1]]

    def lookup(self, attr: str, classes: Iterable[str]) -> list:
        classes = sorted(set(classes))  # sorted: the same order in every run
        if WILDCARD in attr:
            wanted = set(classes)
            return [e for (cls, name), entries in self.exact.items() if cls in wanted and family_matches(attr, name)
                    for e in entries]
        out = [e for cls in classes for e in self.exact.get((cls, attr), [])]
        out += [e for cls, name in self.families if cls in classes and family_matches(name, attr)
                for e in self.exact[(cls, name)]]
        return out


def node_key(node: ast.AST) -> NodeKey:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
            getattr(node, "end_lineno", 0), getattr(node, "end_col_offset", 0))


@dataclass(frozen=True)
class Site:
    """The code context an observation was made in."""

    function: Optional[str]  # "Class.method", "func" or None for module level
    runtime: bool  # reachable after construction (forward path, cache rebuilds)
    autocast_off: bool  # inside autocast(enabled=False) or an equivalent
    # False where nothing here shows whether the code runs at construction or in forward (a hook
    # that a base class from another module calls).
    phase_known: bool = True


@dataclass(frozen=True)
class Product:
    """``positions x frequencies`` (RoPE angles) or ``slopes x positions`` (an ALiBi bias)."""

    node: ast.AST
    op: str  # "outer", "einsum", "matmul", "@", "*", ...
    kind: str  # "rope" or "alibi"
    positions: Value
    positions_node: ast.AST
    factor: Value  # the frequencies or the slopes
    factor_node: ast.AST
    result: Value
    site: Site
    # Whether both operands must share one dtype (matmul, ``@``, an einsum that sums over an axis):
    # a float32 operand beside a converted one raises there instead of rounding.
    one_dtype: bool = False

    @property
    def lowered_by_cuda_autocast(self) -> bool:
        return self.op in CUDA_AUTOCAST_LOWERED


def _positions_key(product: Product) -> tuple:
    """A product's node and where its positions were rounded (None: they never were)."""
    rounded = product.positions.lost_precision()
    return node_key(product.node), rounded.key if rounded is not None else None


@dataclass(frozen=True)
class Handoff:
    """Frequencies handed to code poslint cannot read (a compiled rotary kernel) as an argument."""

    node: ast.AST  # the argument
    callee: str  # its dotted name
    value: Value


@dataclass(frozen=True)
class Cast:
    """An explicit dtype change (``.to``, ``.half()``, ``.type_as``...) of a value with a role."""

    node: ast.AST
    receiver_node: ast.AST
    before: Value
    after: Value
    site: Site
    # Where the target dtype was chosen (``hidden.dtype``, ``torch.float16``), possibly in another module.
    target_node: Optional[ast.AST] = None
    # For the dtype of a tensor (``.to(t)``, ``.to(t.dtype)``): the key of where that tensor's dtype was decided.
    target_follows: Optional[Tuple[int, int, int, int]] = None


@dataclass(frozen=True)
class Store:
    """A tensor kept on a module: ``register_buffer``, ``nn.Parameter`` or a plain attribute."""

    node: ast.AST
    cls: str
    attr: str
    storage: str  # "buffer", "parameter" or "plain"
    value: Value
    value_node: Optional[ast.AST]
    site: Site
    # The string expression that names the attribute (register_buffer, setattr); None for ``self.x = ...``.
    name_node: Optional[ast.AST] = None
    # Values written into the tensor already held (``self.buf[:n] = v``, ``copy_``), which keeps its
    # dtype; False where a new tensor is bound (assignment, register_buffer, setattr).
    written: bool = False


def _into_held(store: Store) -> bool:
    """Whether ``store`` puts a value into the tensor an attribute already holds (written into it,
    or ``self.t.data = v``), not a new tensor of the module's."""
    return store.written or isinstance(store.node, ast.Attribute) and store.node.attr == "data"


@dataclass(frozen=True)
class Creation:
    """A frequencies or slopes tensor computed (the geometric sequence itself)."""

    node: ast.AST
    value: Value
    site: Site


@dataclass(frozen=True)
class Trig:
    """``cos``/``sin``/``polar`` applied to a value (usually angles)."""

    node: ast.AST
    angle: Value
    site: Site


@dataclass(frozen=True)
class AttrRead:
    """A read of a buffer or parameter ``self.<attr>`` in code that may run after ``module.to()``."""

    node: ast.AST
    cls: str
    attr: str
    site: Site


@dataclass
class Borrowed:
    """What another module's code recorded while it ran a call made by the linted file: its
    findings belong to that module unless its own analysis lacks them, and are then reported at
    ``anchor``, the call in the linted file that reached that code."""

    path: str  # how messages name that module's file
    facts: "ModuleFacts"  # over that module's tree
    own: Callable[[], "ModuleFacts"]  # that module's analysis on its own (run when first asked)
    anchor: ast.AST
    seen: set = field(default_factory=set, repr=False)


@dataclass
class ModuleFacts:
    tree: ast.Module
    text: str
    index: "LineIndex"
    names: "ImportResolver"
    module: Optional[str] = None  # the dotted name, when the project's layout tells it
    products: List[Product] = field(default_factory=list)
    casts: List[Cast] = field(default_factory=list)
    stores: List[Store] = field(default_factory=list)
    creations: List[Creation] = field(default_factory=list)
    trigs: List[Trig] = field(default_factory=list)
    attr_reads: List[AttrRead] = field(default_factory=list)
    handoffs: List[Handoff] = field(default_factory=list)
    # Product sites whose result reached cos/sin/polar: certainly rotary.
    rotary_products: Set[NodeKey] = field(default_factory=set)
    # A product (by key) of bounded positions and known frequencies -> the largest angle its angles
    # reach at cos/sin, with the literal scalings on the way (``x * scales * math.pi``)
    largest_angles: Dict[NodeKey, float] = field(default_factory=dict)
    # A product's angles times a literal on the way to cos/sin (by the multiplication's key) -> the literal
    literal_scalings: Dict[NodeKey, float] = field(default_factory=dict)
    # A product (by key) -> the largest literal scaling its angles reach cos/sin with (1: none)
    trig_scales: Dict[NodeKey, float] = field(default_factory=dict)
    # Sites (products, casts) whose result reached both cos and sin: a rotation's angles.
    rotations: Set[NodeKey] = field(default_factory=set)
    # Product sites whose result escapes as a float tensor: returned, stored, passed to a call
    # or added to something (a comparison result is a boolean mask, not a bias).
    escaped: Set[NodeKey] = field(default_factory=set)
    # (class, attr) of buffers construction registers empty and only forward fills.
    filled_in_forward: Set[Tuple[str, str]] = field(default_factory=set)
    # (class, attr) of buffers and parameters that construction stores a tensor in.
    built_at_construction: Set[Tuple[str, str]] = field(default_factory=set)
    # Products first taken for angle products that turned out to scale the positions of a later one.
    superseded: Set[NodeKey] = field(default_factory=set)
    # Products whose angles sit beside those of other position grids in one embedding (the x and
    # y halves of a 2-D grid's): how many axes that grid has.
    grid_axes: Dict[NodeKey, int] = field(default_factory=dict)
    # Each class of this file and its bases (in this file), nearest first.
    class_mro: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # Why float32 matmuls may run at reduced precision (TF32, or bfloat16 inside) in the project
    # this file is linted with ("train.py sets allow_tf32 on line 12", "assume-tf32 is set");
    # None when nothing says so. Set by the engine, not by the interpreter.
    reduced_matmul_precision: Optional[str] = None
    # Facts of imported modules' code run by calls from this file, and the files read for them.
    borrowed: List[Borrowed] = field(default_factory=list)
    # Every other module whose code the linted file's calls ran, recording or not: a value one made
    # may meet a rule in another's facts.
    reached: List[Borrowed] = field(default_factory=list)
    dependencies: Set[str] = field(default_factory=set)
    # For another module's facts recorded by a call of the linted file: the linted file's facts,
    # which hold the nodes of the values that call passed in. Held weakly: the linted file's facts
    # hold these (``borrowed``), and a cycle would be left to the garbage collector.
    linted_ref: Optional["weakref.ref"] = field(default=None, repr=False)
    # What each rule finds in these facts (node keys), when another module's report needs it.
    findings_by_rule: Dict[str, Set[NodeKey]] = field(default_factory=dict, repr=False)
    _node_ids: Optional[Set[int]] = field(default=None, repr=False)
    _parents: Optional[Dict[int, ast.AST]] = field(default=None, repr=False)
    _reads: Optional[AttrIndex] = field(default=None, repr=False)
    _stores: Optional[AttrIndex] = field(default=None, repr=False)
    _read_class: Optional[Dict[int, str]] = field(default=None, repr=False)
    _related: Optional[Dict[str, Set[str]]] = field(default=None, repr=False)
    _cast_trig_products: Optional[Dict[tuple, List[Cast]]] = field(default=None, repr=False)
    _origins: Optional["OriginIndex"] = field(default=None, repr=False)
    _extents: Optional[Dict[tuple, List[Optional[int]]]] = field(default=None, repr=False)

    def rope_products(self) -> Iterable[Product]:
        """Angle products: frequencies times recognised positions, or times anything when the
        result reaches cos/sin/polar (an einsum of a decay kernel with a matrix is not RoPE)."""
        for product in self.products:
            if product.kind == "rope" and node_key(product.node) not in self.superseded and (
                    product.positions.has(Role.POSITIONS) or node_key(product.node) in self.rotary_products):
                yield product

    def trained_initial_values(self) -> Set[Tuple[int, int, int, int]]:
        """The products and creations whose values become the initial value of a parameter that
        an optimiser trains (not ``requires_grad=False``): training starts from them, or a
        checkpoint replaces them, so how construction rounded them does not last. A value written
        into an attribute that some path of its class registers as a parameter (``.data = v``,
        ``copy_``) is that parameter's on the paths that hold one, whatever another path registers."""
        parameters = {(store.cls, store.attr) for store in self.stores if store.storage == "parameter"}
        return {key for store in self.stores
                if (store.storage == "parameter" or _into_held(store) and (store.cls, store.attr) in parameters)
                and FROZEN_PARAMETER not in store.value.products for key in store.value.products}

    def longest_extent(self, product: Product) -> Optional[int]:
        """The extent of the longest positions rounded at the same place that reach ``product``'s
        node in any of the runs the analysis made of it (a function run from a demo with 253 frames and
        from a model with an input's length: the latter, unbounded); None where one is unbounded."""
        if self._extents is None:  # read once the analysis is done
            self._extents = {}
            for other in self.products:
                self._extents.setdefault(_positions_key(other), []).append(other.positions.extent)
        extents = self._extents.get(_positions_key(product), [product.positions.extent])
        return None if None in extents else max(extents)

    def axes_of(self, product: Product) -> int:
        """How many axes the grid of ``product``'s positions has: 1 for a sequence."""
        return max(self.grid_axes.get(node_key(product.node), 1), product.positions.axes or 1)

    def alibi_products(self) -> Iterable[Product]:
        """ALiBi biases: slopes times recognised positions."""
        for product in self.products:
            if product.kind == "alibi" and product.positions.has(Role.POSITIONS):
                yield product

    def value_reads(self, attr: str, classes: Iterable[str]) -> List[AttrRead]:
        """Run-time reads of buffer/parameter ``attr``, in methods of ``classes``, that use its
        values, not only its ``.dtype``/``.device``/``.shape``."""
        if self._reads is None:
            self._reads = AttrIndex((read.cls, read.attr, read) for read in self.attr_reads
                                    if not _metadata_read(self.parent_of(read.node)))
        return self._reads.lookup(attr, classes)

    def stores_of(self, attr: str, classes: Iterable[str]) -> List[Store]:
        """Where methods of ``classes`` keep a tensor in ``self.<attr>``."""
        if self._stores is None:
            self._stores = AttrIndex((store.cls, store.attr, store) for store in self.stores)
        return self._stores.lookup(attr, classes)

    def reading_class(self, node: ast.AST) -> Optional[str]:
        """The class whose method read a buffer/parameter at ``node``."""
        if self._read_class is None:
            self._read_class = {id(read.node): read.cls for read in self.attr_reads}
        return self._read_class.get(id(node))

    def related_classes(self, cls: str) -> Set[str]:
        """``cls``, its bases and its subclasses in this file: the classes that share its attributes."""
        if self._related is None:
            self._related = {}
            for name, mro in self.class_mro.items():
                for base in mro:
                    self._related.setdefault(base, set()).add(name)
        return self._related.get(cls, {cls}) | set(self.class_mro.get(cls, (cls,)))

    def cos_sin_cast_after(self, product: Product, here_only: bool = False) -> bool:
        """Whether cos/sin computed from this product are cast to an explicit dtype afterwards,
        so that computing the product in float32 leaves the outputs' dtypes as they were. Where
        callers give the product different precisions, a cast counts for the callers whose cos/sin
        have this product's precision (another caller's cast leaves this one's outputs as they are);
        ``here_only``: a cast in the product's own function only."""
        home = self.enclosing_function(product.node)
        # (a cast in the product's own function follows it in every call; one elsewhere, its caller's)
        return any((cast.before.prec is product.result.prec and not here_only) or
                   (home is not None and self.enclosing_function(cast.node) is home)
                   for cast in self._trig_casts(product))

    def cos_sin_cast_to_fixed(self, product: Product, fixed: ast.AST) -> bool:
        """Whether a cos/sin of this product is cast to the dtype of a tensor whose dtype ``fixed``
        decides (``emb.to(t)`` of the positions ``t``): a fix that makes them float32 changes it."""
        return any(cast.target_follows == node_key(fixed) for cast in self._trig_casts(product))

    def _trig_casts(self, product: Product) -> List["Cast"]:
        """The casts of cos/sin computed from ``product``."""
        if self._cast_trig_products is None:  # read once the analysis is done: one pass over the casts
            self._cast_trig_products = {}
            for cast in self.casts:
                if cast.before.has(Role.TRIG):
                    for key in cast.before.products:
                        self._cast_trig_products.setdefault(key, []).append(cast)
        return self._cast_trig_products.get(node_key(product.node), [])

    def origins(self) -> "OriginIndex":
        """Where values with each origin (by the key of where their dtype was decided) went: read
        once the analysis is done, so that a fix asks about its own reads only."""
        if self._origins is None:
            self._origins = OriginIndex(self)
        return self._origins

    def trig_scale(self, product: Product) -> float:
        """What every way of ``product``'s angles to cos/sin multiplies them by at least (1: some
        way does not scale them, or none is known)."""
        return self.trig_scales.get(node_key(product.node), 1.0)

    def enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        """The function of this module's tree that holds ``node``, or None."""
        current = self.parent_of(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            current = self.parent_of(current)
        return current

    def holds(self, node: ast.AST) -> bool:
        """Whether ``node`` is in this module's tree (and not another module's)."""
        if self._node_ids is None:
            self._node_ids = node_ids(self.tree)  # shared by every facts of the same tree
        return id(node) in self._node_ids

    def parent_of(self, node: ast.AST) -> Optional[ast.AST]:
        if self._parents is None:
            self._parents = {id(child): parent for parent in ast.walk(self.tree)
                             for child in ast.iter_child_nodes(parent)}
        return self._parents.get(id(node))

    def source(self, node: ast.AST) -> str:
        owner = self._owner(node)
        start, end = owner.span(node)
        return owner.text[start:end]

    def locates(self, node: ast.AST) -> bool:
        """Whether ``node`` is in this module's tree, the linted file's, or that of another module
        whose code the linted file's calls ran: a value may come from a module no call ran."""
        return self._owner_of(node) is not None

    def _owner_of(self, node: ast.AST) -> Optional["ModuleFacts"]:
        if self.holds(node):
            return self
        linted = self.linted_ref() if self.linted_ref is not None else None  # alive: it holds these facts
        if linted is None:
            return None
        if linted.holds(node):
            return linted
        return next((borrowed.facts for borrowed in linted.reached if borrowed.facts.holds(node)), None)

    def span(self, node: ast.AST) -> Tuple[int, int]:
        """Character offsets of ``node`` in :attr:`text` (in the linted file's text, for a node of
        the linted file met in another module's facts), for building fixes."""
        if not self.locates(node):
            raise ForeignNode(f"line {getattr(node, 'lineno', '?')} of a module that is neither this one, the "
                              f"linted file nor one its calls ran")
        owner = self._owner(node)
        start = owner.index.utf8_col_to_offset(node.lineno, node.col_offset)
        end = owner.index.utf8_col_to_offset(node.end_lineno, node.end_col_offset)
        return start, end

    def _owner(self, node: ast.AST) -> "ModuleFacts":
        return self._owner_of(node) or self


class ForeignNode(LookupError):
    """A node of a third module, whose offsets no text at hand gives (a fix cannot edit it)."""


class OriginIndex:
    """The facts by origin key: cos/sin taken of values of each origin, the casts of cos/sin
    values of each origin, the casts whose target dtype each origin decided, the products whose
    operands have each origin, and every origin that reached a product or cos/sin."""

    def __init__(self, facts: ModuleFacts):
        self.trigs: Dict[NodeKey, List[Trig]] = {}
        self.used: Set[NodeKey] = set()
        for trig in facts.trigs:
            origins = [o for o in (trig.angle.origin, trig.angle.rounded) if o is not None]
            self.used.update(o.key for o in origins)
            if trig.angle.origin is not None:
                self.trigs.setdefault(trig.angle.origin.key, []).append(trig)
        self.cast_trigs = {cast.before.origin.key for cast in facts.casts
                           if cast.before.has(Role.TRIG) and cast.before.origin is not None}
        self.casts_to: Dict[NodeKey, List[Cast]] = {}
        for cast in facts.casts:
            if cast.target_node is not None:
                self.casts_to.setdefault(node_key(cast.target_node), []).append(cast)
        self.products: Dict[NodeKey, List[Product]] = {}
        for product in facts.products:
            for key in {o.key for value in (product.factor, product.positions)
                        for o in (value.origin, value.rounded) if o is not None}:
                self.used.add(key)
                self.products.setdefault(key, []).append(product)
        # Products whose angles some cos/sin here is taken of.
        self.taken = {key for trig in facts.trigs for key in trig.angle.products}
