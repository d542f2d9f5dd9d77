"""Roles from the mechanism: how an operation changes what a value is for (positions,
frequencies, slopes, angles...), by the shape of the computation and never by a name."""

from __future__ import annotations

import ast
import math
from typing import Dict, Optional, Set, Tuple

from poslint.analysis import series as series_ops
from poslint.analysis.facts import node_key
from poslint.analysis.lattice import Prec, Role, Sort, Value, value_range


def power_role(base: Value, exponent: Value) -> Role:
    """``base ** index``: ALiBi slopes for a power of two below one (``r ** arange`` with
    ``r = 2 ** -x``, or ``2 ** -index``); frequencies for a negated index; otherwise a growing
    scale (``2 ** arange``: NeRF-style feature scales), which becomes frequencies when inverted.
    A literal base below one decays with a non-negative index (``(1 / 10000) ** (arange / d)``)."""
    number = base.payload_key[1] if isinstance(base.payload_key, tuple) and len(base.payload_key) == 2 \
        and base.payload_key[0] == "const" and type(base.payload_key[1]) in (int, float) else None
    below_one = number is not None and 0 < number < 1
    # (an exponent the code bounds at or below zero, ``linspace(0, -1, n)``, is negated too)
    low, high = value_range(exponent) if exponent.interval is not None else (0.0, math.inf)
    negative = exponent.has(Role.NEGATIVE) or (high <= 0 and low < 0)
    decays = negative != below_one
    pow2 = is_pow2_base(base) or (below_one and math.log2(number).is_integer())
    if base.has(Role.POW2) or (pow2 and decays):
        return Role.SLOPES
    if pow2:
        return Role.GROWTH2
    return Role.FREQS if decays else Role.GROWTH


def sign_of(op: ast.operator, left: Value, right: Value) -> frozenset:
    """NEGATIVE for a product or quotient of one negated operand, for a sum of two."""
    negated = (left.has(Role.NEGATIVE), right.has(Role.NEGATIVE))
    if isinstance(op, (ast.Mult, ast.Div, ast.FloorDiv)):
        return frozenset({Role.NEGATIVE}) if negated[0] != negated[1] else frozenset()
    if isinstance(op, ast.Add) and all(negated):
        return frozenset({Role.NEGATIVE})
    return frozenset()


def negated(value: Value) -> Value:
    low, high = value_range(value)
    interval = (-high, -low)
    if value.sort in (Sort.TENSOR, Sort.PYINT, Sort.PYFLOAT, Sort.OTHER) and not (
            value.roles & {Role.FREQS, Role.SLOPES, Role.ANGLES, Role.BIAS, Role.TRIG}):
        return value.with_(roles=value.roles ^ {Role.NEGATIVE}, series=series_ops.negated(value.series), interval=interval)
    return value.with_(series=series_ops.negated(value.series), interval=interval)


def is_grid(value: Value) -> bool:
    return value.has(Role.POSITIONS) and value.sort in (Sort.TENSOR, Sort.OTHER)


# Arithmetic of a Python number with an unknown value: a number, not a tensor of any dtype.
NUMBER_LIKE = Value(sort=Sort.OTHER, payload_key="number-like")


def unknown_operand(value: Value) -> bool:
    """A tensor operand of no known role (a parameter, an import, a buffer of unknown origin);
    not a number (``2 * math.pi / heads``: a scalar scale makes no rotary table)."""
    return not value.roles and value.sort in (Sort.TENSOR, Sort.OTHER) and value.payload_key != NUMBER_LIKE.payload_key


def held_by_module(value: Value) -> bool:
    """A floating tensor read from a buffer or parameter, whatever its role (possibly upcast since;
    not one made or cast in a buffer's dtype, rounded so and upcast since: no state of the module),
    also one stored in 16 bits at construction (``nn.Parameter(randn(n, dtype=torch.bfloat16))``)."""
    return value.is_tensor and (
        value.prec is Prec.CONVERTED or (value.rounded is not None and value.rounded.prec is Prec.CONVERTED
                                         and not value.rounded.cast)
        or value.origin is not None and value.origin.stored and value.prec is Prec.LOW)


def module_held(value: Value) -> bool:
    """A floating tensor of no known role read from a buffer or parameter."""
    return held_by_module(value) and not value.roles


def module_state(value: Value) -> bool:
    """A floating tensor of no known role that the module holds: read from a buffer or parameter,
    not another tensor cast to one's dtype."""
    return module_held(value) and not (value.origin is not None and value.origin.cast)


# What an exponential table may be for: frequencies, slopes, or their growing inverses.
TABLE_ROLES = frozenset({Role.FREQS, Role.SLOPES, Role.GROWTH, Role.GROWTH2})


def spacing_of_one_table(left: Value, right: Value) -> bool:
    """``left - right`` subtracts entries of one exponential table from each other (``edges[2:] -
    edges[:-2]``, a filterbank's band widths): a spacing, whose inverse normalises, not frequencies."""
    return left.is_tensor and right.is_tensor and bool(left.roles & TABLE_ROLES) and \
        bool(right.roles & TABLE_ROLES) and bool(left.products & right.products)


def is_pow2_base(value: Value) -> bool:
    return value.has(Role.POW2) or value.payload_key in (("const", 2), ("const", 2.0))


def combined_roles(op: ast.operator, left: Value, right: Value) -> frozenset:
    roles = set(left.roles | right.roles)
    if isinstance(op, ast.Pow):
        exponent_indexed = right.has(Role.POSITIONS) or right.has(Role.FREQ_INDEX)
        if exponent_indexed and right.is_number and left.is_tensor and not left.roles:
            # ``levels ** -k`` for the k-th of a loop: a tensor of data to one power (a quantiser's
            # scale), not a table that an index lays along the channels
            return frozenset(roles - {Role.POSITIONS, Role.FREQ_INDEX, Role.NEGATIVE})
        if exponent_indexed:
            roles -= {Role.POSITIONS, Role.FREQ_INDEX, Role.NEGATIVE}
            roles.add(power_role(left, right))
        elif left.has(Role.POSITIONS):
            roles.discard(Role.POSITIONS)
        elif is_pow2_base(left):
            return frozenset({Role.POW2})
    if isinstance(op, ast.Div) and right.has(Role.GROWTH) and not left.has(Role.GROWTH):
        # 1 / base ** (index / d); an input over the table instead (``days / denom``) is what the
        # frequencies turn, no table of them
        roles = (roles - {Role.GROWTH}) | (set() if unknown_operand(left) else {Role.FREQS})
    if isinstance(op, ast.Div) and right.has(Role.GROWTH2) and not left.has(Role.GROWTH2):
        roles = (roles - {Role.GROWTH2}) | {Role.SLOPES}  # 1 / 2 ** (index * 8 / heads)
    if isinstance(op, (ast.Add, ast.Sub)) and (left.is_number or right.is_number) and Role.FREQS in roles:
        roles.discard(Role.FREQS)  # 1 - exp(linspace(log(a), log(b), h)): decays, no table of frequencies
    if isinstance(op, ast.Div) and left.has(Role.POSITIONS) and right.has(Role.POSITIONS):
        roles.discard(Role.POSITIONS)  # a grid over its own last entry: a ratio in [0, 1], not an index
    roles = (roles - {Role.NEGATIVE}) | sign_of(op, left, right)
    if Role.LOGARITHM in roles and any(unknown_operand(v) or v.is_tensor for v in (left, right)) and \
            not any(v.has(Role.LOGARITHM) and v.sort is not Sort.PYFLOAT and v.payload_key != NUMBER_LIKE.payload_key
                    for v in (left, right)):
        # a tensor scaled by log(c), or by a number computed from it (CLIP's ``ones([]) * log(1 /
        # 0.07)``, a temperature; ``arange(0, d, 2) * -(log(c) / half)``): no grid of logarithms,
        # whose exp would be frequencies
        roles.discard(Role.LOGARITHM)
    if roles & {Role.FREQS, Role.SLOPES, Role.GROWTH, Role.GROWTH2}:
        roles -= {Role.POSITIONS, Role.FREQ_INDEX}
    if Role.FREQS in roles:
        roles.discard(Role.GROWTH)
    added = right if left.has(Role.TRIG) else left
    if isinstance(op, (ast.Add, ast.Sub)) and left.has(Role.TRIG) != right.has(Role.TRIG) and \
            (added.is_tensor or unknown_operand(added)):
        # ``x + pos_emb``: a sinusoid table added to activations is no longer cos/sin values (a cast
        # of the sum restores the activations' dtype, not the table's)
        roles.discard(Role.TRIG)
    if Role.ANGLES in roles or Role.BIAS in roles or Role.TRIG in roles:
        roles -= {Role.POSITIONS, Role.FREQS, Role.SLOPES, Role.GROWTH, Role.GROWTH2}
    roles.discard(Role.POW2)
    return frozenset(roles)


# --- sinks: where a product ends up decides what it is ------------------------------------------


class Sinks:
    """The products (by node key) whose results reached cos, sin, or attention as a bias. The
    interpreter runs each module twice, so a product learns in the first round where its result
    goes, and is taken as a rotary angle or an ALiBi bias in the second (see Interpreter.product)."""

    def __init__(self) -> None:
        self.trig: Set[tuple] = set()  # cos, sin or polar
        self.cos: Set[tuple] = set()
        self.sin: Set[tuple] = set()
        self.attention: Set[tuple] = set()  # attn_mask=, baddbmm's input, a term of softmax's input
        # exp(slope x distance): a decay kernel (Enformer's exponential features), no additive bias
        self.exponentiated: Set[tuple] = set()
        self.returned: Set[tuple] = set()  # a module's output: a rotary table another module applies
        self.tables: Set[tuple] = set()  # handed to a rotary kernel as its cos/sin tables: cos/sin values
        self.terms: Dict[tuple, frozenset] = {}  # a sum of two tensors (by node key) -> its terms' traces
        # Products a phase the module holds was added to (``t.ger(freqs) + phases``): one cos of that
        # sum is a rotation's, ``cos(a) cos(p) - sin(a) sin(p)`` (random Fourier features, Time2Vec).
        self.phase_shifted: Set[tuple] = set()
        self.twins: Dict[tuple, Set[tuple]] = {}  # a product -> the products of the same two operands
        # A product -> the dims (as written) that its cos and sin are concatenated along: the channels.
        self.channel_dims: Dict[tuple, Set[int]] = {}
        self._by_operands: Dict[tuple, Set[tuple]] = {}
        self._operands: Dict[tuple, tuple] = {}  # a product -> (its function, its operands as written)

    def reach_trig(self, angle: Value, which: str) -> None:
        """``angle`` reaches cos (``which`` "cos") or sin. A product that reaches both is a
        rotation; one that reaches sin alone may be an activation (Snake's sin(a x))."""
        self.trig.update(angle.recent)
        (self.cos if which == "cos" else self.sin).update(angle.recent)
        if angle.recent & self.phase_shifted:
            self.cos.update(angle.recent)
            self.sin.update(angle.recent)

    def shift_phase(self, angle: Value) -> None:
        """A phase the module holds is added to ``angle`` (after the products it comes from)."""
        self.phase_shifted.update(angle.recent)

    def concatenate(self, parts, dim: int) -> None:
        """``cat([cos, sin], dim)``: the angles' products lay their channels (frequencies) along ``dim``.
        ``cat([sin(x / w1), cos(x / w2)])``: one encoding of ``x`` whose sine and cosine halves turn
        at other frequencies; the two products are one rotation's, as twins are."""
        cos = frozenset().union(*(part.recent for part in parts if part.periodic == "cos"))
        sin = frozenset().union(*(part.recent for part in parts if part.periodic == "sin"))
        for key in cos & sin:
            self.channel_dims.setdefault(key, set()).add(dim)
        for sine in sin - cos:
            for cosine in cos - sin:
                if self._share_an_operand(sine, cosine):
                    group = self.twins.get(sine, {sine}) | self.twins.get(cosine, {cosine})
                    for member in group:
                        self.twins[member] = group

    def leave_module(self, output: Value, first_line: int, last_line: int) -> None:
        """``output`` is what a module's forward (on lines ``first_line`` to ``last_line``) returns:
        the callers (often in other modules, as with Megatron's and Transformer Engine's angle
        tables) take the cos and sin of the products that forward computes itself."""
        self.returned.update(key for key in output.recent if first_line <= key[0] <= last_line)

    def reach_attention(self, bias: Value) -> None:
        self.attention.update(bias.recent)

    def add_terms(self, node: ast.AST, left: Value, right: Value) -> tuple:
        """Remember what the sum ``left + right`` at ``node`` adds, and return its key for the
        sum's trace."""
        key = node_key(node)
        self.terms[key] = self.terms.get(key, frozenset()) | left.recent | right.recent
        return key

    def reach_softmax(self, scores: Value) -> None:
        """``softmax(scores + bias)``: a term added on the way biases attention. What softmax
        normalises directly (``(scores * scale).softmax()``) is the scores, not a bias."""
        for key in scores.recent:
            self.attention.update(self.terms.get(key, ()))

    def same_operands(self, key: tuple, operands: tuple) -> None:
        """The product at ``key`` multiplies ``operands``: ``cos(p @ w)`` and ``sin(p @ w)`` are one
        angle computed twice."""
        group = self._by_operands.setdefault(operands, set())
        earlier = self.twins.get(key)
        if earlier is not None and earlier is not group:  # another round saw other operand values
            group |= earlier
            for member in earlier:
                self.twins[member] = group
        group.add(key)
        self.twins[key] = group

    def written_as(self, key: tuple, function: object, operands: Tuple[Optional[str], ...]) -> None:
        """The product at ``key``, in ``function``, multiplies the expressions ``operands`` (dumped)."""
        self._operands[key] = (function, operands)

    def _share_an_operand(self, first: tuple, second: tuple) -> bool:
        """Whether the products at ``first`` and ``second``, in one function, multiply one
        expression (``x[:, :, None]`` over two tables)."""
        a, b = self._operands.get(first), self._operands.get(second)
        return a is not None and b is not None and a[0] == b[0] and bool((set(a[1]) & set(b[1])) - {None})

    def reach_tables(self, table: Value) -> None:
        """``table`` is given to a helper that applies cos/sin tables as given (flash-attn's
        ``apply_rotary_emb(x, cos, sin)``): what it comes from holds cos/sin values, not angles."""
        self.tables.update(table.recent)

    def rotation(self, key: tuple) -> bool:
        """Whether the product at ``key`` (or one of the same operands) reached both cos and sin
        (polar counts as both)."""
        group = self.twins.get(key) or {key}
        return bool(group & self.cos) and bool(group & self.sin)


def operand_identity(value: Value, node: ast.AST) -> tuple:
    """What a product's operand ``value`` (at ``node``) is, whichever read of it (``self.w`` read
    twice is one operand): its kind, precision, roles, the reason its precision was decided, the
    grids it comes from and the index it is read at (``arange(1, l + 1)`` and ``arange(l, 0, -1)``,
    ``self.roots[1]`` and ``self.roots[3]`` are other operands: a basis's ``cos(m * a)`` and
    ``sin(m' * a)`` are no rotation)."""
    index = ast.dump(node.slice) if isinstance(node, ast.Subscript) else None
    return value.sort, value.prec, value.roles, value.origin.reason if value.origin else None, value.grids, index


def candidate_trace(node: ast.AST, a: Value, b: Value) -> frozenset:
    """The products a value comes from, this one included, so that a sink it reaches later can
    confirm this product as a rotary angle or an ALiBi bias."""
    return a.recent | b.recent | {node_key(node)}
