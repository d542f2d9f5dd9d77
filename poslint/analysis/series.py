"""The values of a short 1-D tensor that the code fixes at analysis time: an ``arange`` of literal
(or folded configuration-default) bounds and the elementwise arithmetic on it, such as
``1.0 / base ** (arange(0, dim, 2) / dim)`` or ``exp(arange(n) * -c)``. Severity estimates use
the code's own frequencies instead of assumed ones (head dim 128, base 10000)."""

from __future__ import annotations

import ast
import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Tuple

from poslint.analysis.lattice import Prec

if TYPE_CHECKING:
    from poslint.analysis.lattice import Value

# Longer tensors (position grids of a whole context) are not tracked: every operation on them
# would cost a pass over their values.
MAX_LENGTH = 4096


def bf16(x: float) -> float:
    """``x`` rounded to bfloat16 (round to nearest, ties to even)."""
    if not math.isfinite(x) or abs(x) > 3.0e38:
        return x
    bits = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def fp16(x: float) -> float:
    """``x`` rounded to float16 (round to nearest, ties to even); infinite past its range."""
    try:
        return struct.unpack("<e", struct.pack("<e", float(x)))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


@dataclass(frozen=True)
class Series:
    """The values: exactly; as the code computes them when every step in the activations' dtype, a
    converted buffer's or an explicit 16-bit one runs in bfloat16 (``low``); and when the steps in
    the default dtype do too (``low_default``: construction under a bfloat16 default)."""

    exact: Tuple[float, ...]
    low: Tuple[float, ...]
    low_default: Tuple[float, ...]

    def __len__(self) -> int:
        return len(self.exact)

    @property
    def parts(self) -> Tuple[Tuple[float, ...], ...]:
        return self.exact, self.low, self.low_default


def integers(start: int, end: int, step: int) -> Optional[Series]:
    """``arange(start, end, step)``."""
    if not step or abs((end - start) // step) > MAX_LENGTH:
        return None
    values = tuple(float(v) for v in range(start, end, step))
    return Series(values, values, values) if values else None


def stepped(start: float, end: float, step: float) -> Optional[Series]:
    """``arange(start, end, step)`` of fractional bounds (``arange(0, 1, 4 / dim)``)."""
    count = math.ceil((end - start) / step) if step else 0
    if not 0 < count <= MAX_LENGTH:
        return None
    values = tuple(float(start + i * step) for i in range(count))
    return Series(values, values, values)


def spaced(start: float, end: float, steps: int) -> Optional[Series]:
    """``linspace(start, end, steps)``."""
    if not isinstance(steps, int) or not 0 < steps <= MAX_LENGTH:
        return None
    if steps == 1:
        values: Tuple[float, ...] = (float(start),)
    else:
        step = (end - start) / (steps - 1)
        values = tuple(float(start + i * step) for i in range(steps))
    return Series(values, values, values)


def literal(numbers: Optional[Sequence[float]]) -> Optional[Series]:
    """``tensor([a, b, ...])`` of literal numbers (None for anything else)."""
    if not numbers or len(numbers) > MAX_LENGTH or not all(isinstance(v, (int, float)) for v in numbers):
        return None
    values = tuple(float(v) for v in numbers)
    return Series(values, values, values)


def rounded(series: Optional[Series], prec: Prec, float16: bool = False) -> Optional[Series]:
    """``series`` as a step whose result has precision ``prec`` leaves it (in ``float16``, for an
    explicit cast to it)."""
    if series is None or not prec.may_be_16bit:
        return series
    low16 = fp16 if float16 else bf16
    low = series.low if prec is Prec.DEFAULT else tuple(low16(v) for v in series.low)
    return Series(series.exact, low, tuple(low16(v) for v in series.low_default))


def _apply(fn: Callable[..., float], *operands) -> Optional[Tuple[float, ...]]:
    try:
        return tuple(fn(*values) for values in zip(*operands))
    except (ArithmeticError, ValueError):
        return None


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: float(a // b),
    ast.Pow: lambda a, b: a ** b,
}


def _operand(value: Value):
    """A value's series, or the number it is (a literal or a folded one), else None."""
    if value.series is not None:
        return value.series
    key = value.payload_key
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "const" and type(key[1]) in (int, float):
        return key[1]
    return None


def binary(op: ast.operator, left_value: Value, right_value: Value, prec: Prec) -> Optional[Series]:
    """``left op right`` of a series and a number (or two series of one length), whose result
    has precision ``prec``. Anything else: None."""
    fn = _BINARY.get(type(op))
    left, right = _operand(left_value), _operand(right_value)
    if fn is None or left is None or right is None or not (isinstance(left, Series) or isinstance(right, Series)):
        return None
    length = len(left) if isinstance(left, Series) else len(right)
    parts = []
    for i in range(3):
        operands = [v.parts[i] if isinstance(v, Series) else (float(v),) * length for v in (left, right)]
        if any(len(values) != length for values in operands):
            return None
        values = _apply(fn, *operands)
        if values is None or not all(isinstance(v, float) and math.isfinite(v) for v in values):
            return None
        parts.append(values)
    return rounded(Series(*parts), prec)


_UNARY = {
    "exp": math.exp,
    "exp2": lambda v: 2.0 ** v,
    "reciprocal": lambda v: 1.0 / v,
    "neg": lambda v: -v,
    "negative": lambda v: -v,
    "sqrt": math.sqrt,
    "log": math.log,
}

# Methods whose result holds the receiver's values: casts and shape, device and layout changes.
KEEPING = frozenset({
    "float", "double", "half", "bfloat16", "to", "type", "type_as", "unsqueeze", "squeeze", "view", "reshape",
    "expand", "expand_as", "repeat", "contiguous", "flatten", "clone", "detach", "cuda", "cpu", "broadcast_to",
    "tile", "repeat_interleave", "requires_grad_", "pin_memory",
    # routed through the arithmetic, which computes the values itself
    "pow", "float_power", "mul", "multiply", "div", "true_divide", "divide", "add", "sub", "subtract",
})


def after_method(name: str, receiver: Optional[Series], result: Optional[Series], prec: Prec) -> Optional[Series]:
    """The values of ``receiver.name()`` whose result the interpreter computed as ``result``, of
    precision ``prec``."""
    fn = _UNARY.get(name)
    if fn is not None:
        if receiver is None:
            return None
        parts = [_apply(fn, values) for values in receiver.parts]
        if any(p is None or not all(math.isfinite(v) for v in p) for p in parts):
            return None
        return rounded(Series(*parts), prec)
    return result if name in KEEPING else None


def negated(series: Optional[Series]) -> Optional[Series]:
    if series is None:
        return None
    return Series(*(tuple(-v for v in values) for values in series.parts))


_FOLDABLE = {"log": math.log, "log2": math.log2, "log10": math.log10, "sqrt": math.sqrt, "exp": math.exp,
             "pow": math.pow, "floor": math.floor, "ceil": math.ceil, "float": float, "max": max, "min": min}


def folded_call(name: str, numbers) -> Optional[tuple]:
    """The constant that ``math.name(*numbers)`` (or the builtin ``float``, ``max``, ``min``) of
    literal numbers is, as the interpreter's ``("const", value)`` key; None when it is not one."""
    fn = _FOLDABLE.get(name)
    if fn is None or not numbers or any(n is None for n in numbers):
        return None
    try:
        value = fn(*numbers)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) >= 1 << 40:
        return None
    return ("const", value)
