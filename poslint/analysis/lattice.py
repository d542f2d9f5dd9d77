"""The precision lattice and the abstract values the interpreter computes.

A :class:`Value` describes what an expression holds at run time, as far as precision is
concerned: its dtype *source* (:class:`Prec`), what it is for (:class:`Role`: positions,
frequencies, angles, ...), and where its precision was decided (:class:`Origin`), so that a
rule can report the place that a fix must change.
"""

from __future__ import annotations

import ast
import enum
import math
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, FrozenSet, Optional, Tuple

if TYPE_CHECKING:
    from poslint.analysis.series import Series


class Prec(enum.Enum):
    """Where a tensor's dtype comes from."""

    INT = "integer"
    F64 = "float64"
    F32 = "float32"
    LOW = "16-bit"  # explicit bfloat16 / float16
    CONVERTED = "module-converted"  # follows a buffer/parameter that module.to(dtype) converts
    ACTIVATION = "activation"  # follows an input's dtype (x.dtype)
    DEFAULT = "default"  # torch's default dtype, which loaders set to 16 bits
    UNKNOWN = "unknown"

    @property
    def is_float32_or_better(self) -> bool:
        return self in (Prec.F32, Prec.F64)

    @property
    def may_be_16bit(self) -> bool:
        """Floating precision that is, or becomes at run time, 16-bit."""
        return self in LOW_PRECISIONS


LOW_PRECISIONS = frozenset({Prec.LOW, Prec.CONVERTED, Prec.ACTIVATION, Prec.DEFAULT})
# bfloat16 holds every integer up to this exactly, float16 up to the next.
BF16_EXACT_UP_TO = 256
FP16_EXACT_UP_TO = 2048

# When control flow merges, keep the precision most likely to lose information (a may-analysis).
_MERGE_RANK = {Prec.LOW: 7, Prec.CONVERTED: 6, Prec.ACTIVATION: 5, Prec.DEFAULT: 4,
               Prec.UNKNOWN: 3, Prec.F32: 2, Prec.F64: 1, Prec.INT: 0}


class Role(enum.Enum):
    POSITIONS = "positions"
    FREQ_INDEX = "frequency index"  # arange(0, d, 2) that feeds an exponent
    FREQS = "frequencies"  # RoPE inverse frequencies
    HARMONICS = "harmonic numbers"  # frequencies 1, 2, 3.. (times a constant) of a continuous value
    SLOPES = "slopes"  # ALiBi per-head slopes
    ANGLES = "angles"  # positions x frequencies
    TRIG = "cos/sin"  # cos/sin of angles
    ROTARY_COMPLEX = "complex rotation"  # polar(1, angles)
    BIAS = "alibi bias"  # slopes x positions
    QUERY_BIAS = "bias on the diagonal"  # each query's own bias: bias.diagonal(-2, -1)
    POW2 = "power of two"  # 2 ** x: the base of ALiBi's geometric slopes
    GROWTH = "growing scale"  # base ** index with a non-negative exponent: frequencies once inverted
    GROWTH2 = "growing power of two"  # 2 ** index: ALiBi slopes once inverted, else a feature scale
    NEGATIVE = "negated"  # a negated number or index: its exponential decays
    LOGARITHM = "logarithm"  # math.log(x), or a linspace between logarithms: its exp is a geometric sequence


# In ``Value.products``: the value is computed from a random draw (``torch.rand(shape)``), in any module.
RANDOM_DRAW = (-1, -1, -1, -1)
# In ``Value.products``: the value is a phase (``atan2``, ``angle()``, torch's or numpy's), within [-pi, pi].
PHASE = (-2, -2, -2, -2)
# In ``Value.products``: a uniform draw in [0, 1) (``torch.rand``): a random fraction or phase
# (a point drawn within an interval), which Fourier features never use as frequencies (``randn``).
UNIFORM_DRAW = (-4, -4, -4, -4)
# In ``Value.products``: held in ``nn.Parameter(..., requires_grad=False)``: no optimiser moves it
# from the value it was built with (a fixed table kept as a parameter).
FROZEN_PARAMETER = (-5, -5, -5, -5)
# In ``Value.products``: a grid scaled by a tensor, an input or another grid (``times * rates``): an
# exponent of it is a decay window, not ``exp(-c * arange(n))``'s table of frequencies.
SCALED_BY_INPUT = (-6, -6, -6, -6)
# In ``Value.products``: made by ``full(shape, x)``, one value across its shape (a time step, a
# decoding position): it varies along no axis except by what a grid adds to it.
ONE_VALUE_FILL = (-7, -7, -7, -7)
# In ``Value.products``: computed from a module-level constant that is no tensor (a numpy table of
# angle bins, a list of floats): values the code fixes, which no sequence length makes grow.
MODULE_CONSTANT = (-8, -8, -8, -8)
# In ``Value.products``: a random matrix drawn with more rows than coordinates have axes
# (``randn(256, d)``): ``x @ w`` with it maps activations, as a wide ``nn.Linear`` does.
WIDE_RANDOM_DRAW = (-3, -3, -3, -3)
# In ``Value.products``: the output of a layer that maps activations (an ``nn.Linear`` wider than
# coordinates): features of the tokens, never their positions.
LAYER_OUTPUT = (-9, -9, -9, -9)
# In ``Value.products``: a tensor times a Python complex number (``-1j * f * w``): its exponential is
# a rotation, ``cos + i sin`` of what multiplies the imaginary unit.
IMAGINARY_MULTIPLE = (-10, -10, -10, -10)


class Sort(enum.Enum):
    TENSOR = "tensor"
    PYINT = "int"
    PYFLOAT = "float"
    PYCOMPLEX = "complex"
    DTYPE = "dtype"
    TUPLE = "tuple"
    INSTANCE = "instance"
    CALLABLE = "callable"
    OTHER = "other"


@dataclass(frozen=True)
class Origin:
    """The node where a value's precision (or role) was decided, and why, in words."""

    node: ast.AST = field(compare=False, hash=False)
    reason: str
    # Identity of the node; ast nodes hash by identity but are not comparable across runs.
    key: Tuple[int, int, int, int] = ()
    # The precision decided here.
    prec: Optional["Prec"] = None
    # Whether the value was already a relative (key - query) distance when rounded here.
    relative: Optional[bool] = None
    # Whether the values that took this precision here were integers that 16 bits hold exactly.
    exact: bool = False
    # Whether the 16 bits decided here are float16's (integers exact to 2048), not bfloat16's.
    float16: bool = False
    # Whether a cast of a tensor the module does not hold decided it (``ids.to(self.inv_freq.dtype)``
    # takes a buffer's dtype, but its values are not state the module holds).
    cast: bool = False
    # Whether it is the read of a buffer or parameter the module stored in 16 bits at construction
    # (``register_buffer("inv_freq", inv_freq.to(dtype))`` with ``dtype=torch.half``): an upcast at
    # the read restores nothing.
    stored: bool = False
    # Whether a module's entry cast it (FSDP2's ``cast_forward_inputs``): no edit where it is passed
    # keeps it float32.
    entry: bool = False

    @staticmethod
    def at(node: ast.AST, reason: str, prec: Optional["Prec"] = None, relative: Optional[bool] = None,
           exact: bool = False, float16: bool = False, cast: bool = False, stored: bool = False,
           entry: bool = False) -> "Origin":
        key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
               getattr(node, "end_lineno", 0), getattr(node, "end_col_offset", 0))
        return Origin(node, reason, key, prec, relative, exact, float16, cast, stored, entry)


@dataclass(frozen=True)
class Value:
    sort: Sort = Sort.OTHER
    prec: Prec = Prec.UNKNOWN
    roles: FrozenSet[Role] = frozenset()
    origin: Optional[Origin] = None
    # A float32 value upcast from one that was already rounded: the rounding origin.
    rounded: Optional[Origin] = None
    is_complex: bool = False
    # ALiBi positions: key - query differences (zero on the diagonal).
    relative: Optional[bool] = None
    # Tensor rank and the varying axis (counted from the end), for position grids.
    ndim: Optional[int] = None
    axis: Optional[int] = None
    # Every dim but the varying one has size 1 (an arange, unsqueezed): a 1 x N view.
    thin: Optional[bool] = None
    # A grid of literal size: its positions are integers below this bound.
    extent: Optional[int] = None
    # A floating tensor that holds whole numbers only, below ``extent`` (NaN flags times a literal).
    whole: bool = False
    # Powers of two of whole exponents (octave bands ``2.0 ** arange(n)``): every 16-bit dtype holds
    # them exactly (float16 from 2**-24 to 2**15), so a conversion rounds nothing of them.
    dyadic: bool = False
    # A continuous value's largest magnitude where the code bounds it: ``linspace(-1, 1, n)`` and a
    # running count divided by its total hold 1, times ``2 * math.pi`` 6.28 (``extent`` follows it).
    magnitude: Optional[float] = None
    # Its range (low, high), where the code bounds it more tightly than ``magnitude`` says (an end
    # may be infinite): ``arange(0.5, n)`` (0.5, inf), ``2 * t - 1`` of t in (0, 1) (-1, 1), a
    # negated grid over its own end (-1, 0). Read only through ``value_range``.
    interval: Optional[Tuple[float, float]] = None
    # A total over a tensor (a sum, a maximum, a norm, a grid's last entry): what it divides, the
    # running count or the grid it totals, lies within [-1, 1].
    total: bool = False
    # Made on the CPU (a factory given no device, in a module that sets no default device) and
    # computed only from tensors made there: autocast of another device type leaves it alone.
    on_cpu: bool = False
    # Put on the CPU by a literal device (``device="cpu"``, ``.cpu()``), which no device context a
    # caller sets at construction (``with torch.device("cuda"):``) moves.
    cpu_literal: bool = False
    # The position grids (their creation sites, with the call sites of the helpers that made them)
    # these positions come from; and, for positions stacked from grids of different axes (an
    # image's x and y), how many axes they span.
    grids: FrozenSet[Tuple[int, ...]] = frozenset()
    axes: Optional[int] = None
    # The values themselves, where the code fixes them (poslint.analysis.series).
    series: Optional["Series"] = None
    # Product and creation sites (keys) this value derives from.
    products: FrozenSet[Tuple[int, int, int, int]] = frozenset()
    # The most recent product sites only: what cos/sin of this value confirms as rotary.
    recent: FrozenSet[Tuple[int, int, int, int]] = frozenset()
    # "cos" or "sin": the value is that of something, whatever role the something has yet (the
    # first round knows no angles); ``cat([cos, sin], dim)`` tells the channel axis by it.
    periodic: Optional[str] = None
    # A tensor on some paths only, None on the others (joined with None): ``t is None`` is open.
    optional: bool = False
    # Anything the interpreter wants to carry: tuple elements, instance class, callee, dtype's Value.
    payload: Any = field(default=None, compare=False, hash=False)
    # Stable identity of the payload for hashing/memoisation.
    payload_key: Any = None

    def lost_precision(self) -> Optional[Origin]:
        """Where this value was, or became, 16-bit: its own origin if it may be 16-bit now,
        else the origin of the rounding behind a later upcast. None if it never was."""
        if self.prec.may_be_16bit and self.origin is not None:
            return self.origin
        if self.rounded is not None and self.rounded.prec in LOW_PRECISIONS:
            return self.rounded
        return None

    def precision_losses(self) -> Tuple[Origin, ...]:
        """Every place this value was, or became, 16-bit: its own origin if it may be 16-bit
        now, and the first rounding behind a later cast."""
        losses = []
        if self.prec.may_be_16bit and self.origin is not None:
            losses.append(self.origin)
        if self.rounded is not None and self.rounded.prec in LOW_PRECISIONS and self.rounded != self.origin:
            losses.append(self.rounded)
        return tuple(losses)

    def with_(self, **changes) -> "Value":
        """This value with ``changes``: a copy of its fields (``dataclasses.replace`` runs
        ``__init__``, which sets each field through ``object.__setattr__``: a tenth of a run)."""
        _known_fields(changes)
        new = object.__new__(Value)
        state = new.__dict__
        state.update(self.__dict__)
        state.pop(_HASH, None)
        state.update(changes)
        return new

    def has(self, role: Role) -> bool:
        return role in self.roles

    @property
    def is_tensor(self) -> bool:
        return self.sort is Sort.TENSOR

    @property
    def is_number(self) -> bool:
        return self.sort in (Sort.PYINT, Sort.PYFLOAT, Sort.PYCOMPLEX)


_VALUE_FIELDS = frozenset(f.name for f in fields(Value))
_VALUE_DEFAULTS = {f.name: f.default for f in fields(Value)}  # all plain, immutable defaults


def _known_fields(given) -> None:
    if not _VALUE_FIELDS.issuperset(given):
        raise TypeError(f"Value has no field {sorted(set(given) - _VALUE_FIELDS)}")


def _value_init(self, **given) -> None:
    """What the dataclass's ``__init__`` does, keywords only, without an ``object.__setattr__``
    per field: the interpreter makes millions of values."""
    _known_fields(given)
    state = self.__dict__
    state.update(_VALUE_DEFAULTS)
    state.update(given)


Value.__init__ = _value_init
_HASH = "_poslint_hash"


def _compared_fields_ops(cls) -> None:
    """Give the frozen dataclass ``cls`` an ``__eq__`` that is true at once for the same object
    and a ``__hash__`` computed once per object: values are memo keys, hashed on every call. The
    cached hash is left out of pickles (str and enum hashes differ between processes)."""
    key = attrgetter(*(f.name for f in fields(cls) if f.compare))

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    def __hash__(self):
        state = self.__dict__
        known = state.get(_HASH)
        if known is None:
            known = state[_HASH] = hash(key(self))
        return known

    def __getstate__(self):
        return {name: value for name, value in self.__dict__.items() if name != _HASH}

    cls.__eq__, cls.__hash__, cls.__getstate__ = __eq__, __hash__, __getstate__


_compared_fields_ops(Origin)
_compared_fields_ops(Value)

UNKNOWN = Value()
UNKNOWN_TENSOR = Value(sort=Sort.TENSOR)


def tensor(prec: Prec, origin: Optional[Origin] = None, **kw) -> Value:
    return Value(sort=Sort.TENSOR, prec=prec, origin=origin, **kw)


def dtype_value(prec: Prec, origin: Optional[Origin] = None, is_complex: bool = False) -> Value:
    """A dtype object (``torch.bfloat16``, ``x.dtype``) naming a precision."""
    return Value(sort=Sort.DTYPE, prec=prec, origin=origin, is_complex=is_complex)


@dataclass(frozen=True)
class Either:
    """The payload of a module instance or a callable that is one of several, by path: what a
    factory returns (``build_rope()``: the rotary module or a no-op), an attribute set in branches.
    Reading from it or calling it does so on each."""

    members: Tuple[Value, ...]


MOST_ALTERNATIVES = 8  # a join of more (a registry of classes) knows nothing to follow


def alternatives(value: Value) -> Tuple[Value, ...]:
    """The values ``value`` may be: its members if it is an :class:`Either`, else itself."""
    return value.payload.members if isinstance(value.payload, Either) else (value,)


# The payload keys of a tensor filled with one exact value (ones, zeros, ``full(shape, 6)``).
ONE_VALUE_KEYS = ("ones", "one-value", "zeros")


def value_range(value: "Value") -> Tuple[float, float]:
    """The range (low, high) a tensor holds where the code bounds it, from its ``interval`` where
    that agrees with its ``magnitude`` (a step that set one but not the other leaves them apart),
    else from its magnitude; infinite ends where unbounded."""
    high = value.magnitude if value.magnitude is not None else math.inf
    if value.interval is not None:
        low, top = value.interval
        if (max(abs(low), abs(top)) == high) if value.magnitude is not None else top == math.inf:
            return low, top
    return -high, high


def _is_grown_list(value: Value) -> bool:
    """A list that ``append``/``extend`` grew: what its pieces are, merged (see the interpreter)."""
    return isinstance(value.payload_key, tuple) and value.payload_key[:1] == ("list-of",) \
        and isinstance(value.payload, Value)


def merge(a: Value, b: Value) -> Value:
    """Join two values that reach the same program point along different paths."""
    if a == b:
        return a
    if a.sort is Sort.TUPLE and b.sort is Sort.TUPLE and isinstance(a.payload, tuple) and isinstance(b.payload, tuple) \
            and len(a.payload) == len(b.payload) and a.payload_key == a.payload and b.payload_key == b.payload:
        # ``return memory, proposals`` on two paths: each element is joined with its own
        elements = tuple(merge(x, y) for x, y in zip(a.payload, b.payload))
        return Value(sort=Sort.TUPLE, payload=elements, payload_key=elements)
    for grown, other in ((a, b), (b, a)):
        if _is_grown_list(grown) and (_is_grown_list(other) or other.sort is Sort.TUPLE
                                      and isinstance(other.payload, tuple) and other.payload
                                      and other.payload_key == other.payload):
            # a list grown on one path only (``parts = [x]``, ``if flag: parts.append(y)``): a list
            # of what either path holds, as the grown one keeps what its pieces are
            piece = grown.payload
            for element in (other.payload,) if _is_grown_list(other) else other.payload:
                piece = merge(piece, element.with_(payload=None, payload_key=None, extent=None, ndim=None, axis=None)
                              if element.is_tensor else element)
            return grown.with_(roles=grown.roles | other.roles | piece.roles, prec=piece.prec, payload=piece,
                               payload_key=("list-of", piece.sort.value, piece.roles, piece.products, piece.recent))
    constants = [v for v in (a, b) if v.is_tensor and v.payload_key in ONE_VALUE_KEYS and v.prec.may_be_16bit]
    if len(constants) == 1:
        # One path holds a 16-bit tensor of one exact value (a zeros padding point): it rounds
        # nothing, so the join has the other path's precision (an input of unknown dtype stays
        # unknown). An integer one (a mask of ones) still says what the input's dtype is.
        varied = b if constants[0] is a else a
        if varied.sort is Sort.TENSOR:
            return varied.with_(roles=a.roles | b.roles)
        if varied.sort is Sort.OTHER and varied.payload is None:
            return Value(sort=Sort.TENSOR, roles=a.roles | b.roles)
    for held, none in ((a, b), (b, a)):
        if none.payload_key == ("const", None) and held.sort is Sort.OTHER and held.payload is not None:
            return held  # ``Rotary(d) if flag else None``: calls reach the object on the path that holds it
    if a.sort is b.sort and a.sort in (Sort.INSTANCE, Sort.CALLABLE) and a.payload is not None \
            and b.payload is not None and a.payload_key != b.payload_key:
        members = tuple(dict.fromkeys(alternatives(a) + alternatives(b)))
        if len(members) > MOST_ALTERNATIVES:
            return Value(sort=a.sort)
        return Value(sort=a.sort, payload=Either(members),
                     payload_key=("either", frozenset(m.payload_key for m in members)))
    if a.sort is not b.sort:
        for seq, empty in ((a, b), (b, a)):
            if empty.sort is Sort.TUPLE and empty.payload == () and seq.sort is Sort.OTHER and seq.payload is not None:
                return seq  # a list grown on one path only: the empty list on the other adds no element
        if a.sort is Sort.OTHER or b.sort is Sort.OTHER:
            known, other = (b, a) if a.sort is Sort.OTHER else (a, b)
            if known.is_number and isinstance(known.payload_key, tuple) and known.payload_key[:1] == ("const",) \
                    and isinstance(known.payload_key[1], (int, float)) and known.payload_key[1] <= 0:
                # ``dim if dim > 0 else channels`` with ``dim=-1``: a sentinel on one path is not the
                # size, nor its sign (a positive literal stays the estimate: a count's default).
                return known.with_(roles=(known.roles | other.roles) - {Role.NEGATIVE}, payload_key=None)
            return known.with_(roles=known.roles | other.roles,
                               optional=known.optional or other.payload_key == ("const", None))
        if Sort.TENSOR in (a.sort, b.sort):
            a, b = (a, b) if a.sort is Sort.TENSOR else (b, a)
        else:
            return UNKNOWN
    worse, other = (a, b) if _MERGE_RANK[a.prec] >= _MERGE_RANK[b.prec] else (b, a)
    if worse.prec is other.prec and worse.origin is not None and other.origin is not None \
            and worse.origin.float16 and not other.origin.float16:
        worse, other = other, worse  # float16 on one path, bfloat16 on another: bfloat16 rounds more
    # Paths that disagree are often correlated (``if full:`` ... ``if not full: return``): unknown.
    relative = a.relative if a.relative == b.relative else None
    if relative is None and (a.relative is None) != (b.relative is None):
        # A path with no positions or bias at all (a plain causal mask where a flag adds no ALiBi)
        # leaves the other path's bias what it is.
        bare = a if a.relative is None else b
        if not bare.roles & {Role.POSITIONS, Role.BIAS}:
            relative = b.relative if bare is a else a.relative
    same_key = a.payload_key == b.payload_key
    # (two library modules of one kind built at two places, ``default(rotary, RotaryEmbedding(d))``:
    # what they are is the same)
    payload = (worse.payload if worse.payload is not None else other.payload) if same_key else \
        a.payload if a.payload is not None and a.payload == b.payload else None
    return worse.with_(
        roles=a.roles | b.roles,
        rounded=worse.rounded or other.rounded,
        is_complex=a.is_complex or b.is_complex,
        relative=relative,
        ndim=a.ndim if a.ndim == b.ndim else None,
        axis=a.axis if a.axis == b.axis else None,
        # A grid that is full [.., S, S] on some path may be full.
        thin=a.thin if a.thin == b.thin else (False if False in (a.thin, b.thin) else None),
        extent=max(a.extent, b.extent) if a.extent is not None and b.extent is not None else None,
        whole=a.whole and b.whole,
        dyadic=a.dyadic and b.dyadic,
        total=a.total and b.total,
        magnitude=max(a.magnitude, b.magnitude) if a.magnitude is not None and b.magnitude is not None else None,
        interval=(min(a.interval[0], b.interval[0]), max(a.interval[1], b.interval[1]))
        if a.interval is not None and b.interval is not None else None,
        on_cpu=a.on_cpu and b.on_cpu,
        cpu_literal=a.cpu_literal and b.cpu_literal,
        grids=a.grids | b.grids,
        axes=a.axes if a.axes == b.axes else None,
        series=a.series if a.series == b.series else None,
        # (fixed by the module's constants on every path, or not at all)
        products=(a.products | b.products) - ({MODULE_CONSTANT} - (a.products & b.products)),
        recent=a.recent | b.recent,
        optional=a.optional or b.optional,
        payload=payload,
        payload_key=a.payload_key if same_key else None,
    )
