"""The measured consequences that rule messages quote (../shared/PRECISION.md)."""

import math
from dataclasses import dataclass
from typing import Optional, Tuple

from poslint.analysis import Prec, Role, node_key
from poslint.analysis.lattice import RANDOM_DRAW
from poslint.analysis.series import bf16, fp16

DISTINCT_BF16_8K = "only 897 of 8192 positions stay distinct in bfloat16"
# What bfloat16 does to positions of unknown kind (an input that may hold integers or coordinates).
UNKNOWN_KIND = ("they keep 8 significant bits in bfloat16: integer positions collide past 256 (897 of 8192 "
                "stay distinct), coordinates lose up to 0.4% of their value")


@dataclass(frozen=True)
class FrequencyTable:
    """The frequencies a severity estimate uses, and the words that say which they are."""

    exact: Tuple[float, ...]
    # What the code holds, as it computes it (each step rounded where its dtype may be 16-bit):
    # the frequencies, or for ``divisor`` their inverses (``positions / dim_t``).
    computed: Tuple[float, ...]
    words: str
    divisor: bool = False


# What the estimate assumes when the code does not fix its frequencies: rounded to bfloat16, they
# move angle k by about k x 1.22e-3 rad (1 rad by position 818; ../shared/PRECISION.md).
ASSUMED_FREQUENCIES = FrequencyTable(tuple(10000.0 ** (-2 * i / 128) for i in range(64)),
                                     tuple(10000.0 ** (-2 * i / 128) for i in range(64)), "head dim 128, base 10000")

# An angle error below this is negligible (the audit's threshold: benchmarks/AUDIT.md).
NEGLIGIBLE_ANGLE_ERROR = 0.03
# The largest finite float16 value: float16 holds the powers of two up to 2**15 and no higher.
FLOAT16_LARGEST = 65504
# What rounded frequencies do when the code says neither how many positions there are nor which
# frequencies it uses.
ANGLE_ERROR_AT_8K = "the angle error reaches pi by position 8191 (head dim 128, base 10000)"
INPUT_ERROR_AT_8K = ("the angle error reaches pi at an input of 8191 (head dim 128, base 10000; the code does not "
                     "give the range of its input, positions or times)")
ANGLE_ERROR_BY_818 = "the angle error passes 1 rad by position 818 (head dim 128, base 10000)"


# How many positions a grid is assumed to hold when the code does not say.
ASSUMED_POSITIONS = 8192
# Positions times frequencies up to this many pairs are enumerated for a 16-bit product's rounding.
_ENUMERATED_PAIRS = 1 << 18


def grid_extent(facts, product):
    """The extent of ``product``'s positions and the words for what it assumes: a literal grid's
    own; for one axis of a grid of several (an image's rows and columns) sized at run time, the
    side of a square of the assumed 8192 positions in all; else None (8192 in a row). A grid of
    three or more axes (frames, rows, columns) is taken at one frame: its other axes hold one value,
    and its rows and columns are as long as an image's."""
    extent = facts.longest_extent(product)
    axes = facts.axes_of(product)
    if extent is not None or axes < 2:
        return extent, ""
    side = math.ceil(math.sqrt(ASSUMED_POSITIONS))
    if axes == 2:
        return side, f"; a 2-axis grid of {ASSUMED_POSITIONS} positions ({side} per axis) is assumed"
    return side, (f"; a {axes}-axis grid of {ASSUMED_POSITIONS} positions is assumed, at one frame "
                  f"of {side} x {side}")


def frequency_table(value, divisor: bool = False, default_dtype: bool = False) -> Optional[FrequencyTable]:
    """The frequencies ``value`` holds when the code fixes them (``1 / base ** (arange(0, d, 2) /
    d)`` with ``d`` and ``base`` literals or configuration defaults, ``exp(arange(n) * -c)``), or
    their inverses for a ``divisor``; as computed with 16-bit activations or, with
    ``default_dtype``, under a bfloat16 default dtype; else None."""
    series = value.series
    # A zero in a product's factor is a channel that does not turn (linspace(0, t, n)); in a divisor,
    # or in what construction computes (the exponent of exp(-c * arange)), no table.
    if series is None or not series.exact or not any(series.exact) or \
            ((divisor or default_dtype) and any(v == 0 for v in series.exact)):
        return None
    computed = tuple(abs(v) for v in (series.low_default if default_dtype else series.low))
    exact = tuple(1 / abs(v) if divisor else abs(v) for v in series.exact)
    return FrequencyTable(exact, computed, _described(exact), divisor)


def _described(frequencies: Tuple[float, ...]) -> str:
    """'the code's frequencies: dim 32, base 10000' for base ** (-2i / dim), i < dim / 2; else their
    count and range."""
    distinct = sorted(set(frequencies), reverse=True)
    n = len(distinct)
    if n > 1 and math.isclose(distinct[0], 1.0, rel_tol=1e-6):
        ratio = distinct[1]
        base = ratio ** -n
        if all(math.isclose(b / a, ratio, rel_tol=1e-6) for a, b in zip(distinct, distinct[1:])) and \
                math.isclose(base, float(f"{base:.3g}"), rel_tol=1e-6):
            return f"the code's frequencies: dim {2 * n}, base {float(f'{base:.3g}'):g}"
    if n == 1:
        return f"the code's one frequency, {distinct[0]:.3g}"
    return f"the code's {n} frequencies, {distinct[0]:.3g} to {distinct[-1]:.3g}"


def angle_error(last: int, table: FrequencyTable, product_16bit: bool, float16: bool = False) -> float:
    """The largest angle error at positions 0..last of frequencies computed as the code does and
    rounded to bfloat16 (by a converted buffer, a cast, the default dtype), or to ``float16``; with
    the product itself in 16 bits when ``product_16bit``."""
    low, bits = (fp16, 11) if float16 else (bf16, 8)
    used = [1 / low(v) if table.divisor else low(v) for v in table.computed]
    if not product_16bit:
        return last * max(abs(f - g) for f, g in zip(table.exact, used))
    if (last + 1) * len(used) <= _ENUMERATED_PAIRS:
        return max(abs(k * f - low(low(k) * g)) for k in range(last + 1) for f, g in zip(table.exact, used))
    # Too many to enumerate, a bound: the frequencies' part, the last position's rounding times the
    # largest frequency, and half a 16-bit step of the largest angle.
    return (last * max(abs(f - g) for f, g in zip(table.exact, used)) + _half_step(last, bits) * max(used)
            + _half_step(last * max(used), bits))


def _half_step(x: float, bits: int = 8) -> float:
    """Half the spacing of numbers of ``bits`` significant bits (bfloat16's 8) at ``x``."""
    # (frexp's exponent is exact where log2 rounds: log2 of the largest float below 16 is 4.0)
    return 2.0 ** (math.frexp(x)[1] - 1 - bits) if x > 0 else 0.0


# What 16 bits do to angles when the code does not say how far they go.
ANGLES_AT_8K = "angles near 8192 rad are 64 apart in bfloat16"


def rounded_angles(facts, angles) -> Optional[str]:
    """What bfloat16 does to the angles ``angles`` holds: where each product they come from has
    positions of a size the code gives, the largest angle (the last position times the largest
    frequency: the code's table, else 1) and half a bfloat16 step there, or None when that is
    below 0.03 rad; otherwise angles near the assumed 8192."""
    products = [p for p in facts.products if node_key(p.node) in angles.products]
    largest = 0.0
    for product in products:
        if product.positions.extent is None:
            return ANGLES_AT_8K
        table = frequency_table(product.factor, divisor=product.op == "/")
        frequency = max(abs(f) for f in table.exact) if table is not None else 1.0
        largest = max(largest, (product.positions.extent - 1) * frequency)
    if not products:
        return ANGLES_AT_8K
    error = _half_step(largest)
    if error < NEGLIGIBLE_ANGLE_ERROR:
        return None
    return f"angles up to {largest:.3g} rad move by up to {error:.2g} rad in bfloat16"


def rounded_frequencies(extent, unknown: str, factor=None, product_16bit: bool = False, divisor: bool = False,
                        default_dtype: bool = False, float16: bool = False, scale: float = 1.0,
                        over_input: bool = False, magnitude: Optional[float] = None):
    """What frequencies rounded to bfloat16 (or ``float16``) do to the angles of positions
    0..extent-1: ``unknown`` (bfloat16's figure) when the code says neither how many positions there
    are nor which frequencies (``factor``, the value they are read from) it uses; None when the
    error is negligible; else the computed error, with the frequencies and positions it assumes.
    ``product_16bit``: see :func:`angle_error`; ``divisor`` and ``default_dtype``: see
    :func:`frequency_table`; ``scale``: a literal below one that every way to cos/sin multiplies
    the angles by (``sin(angles * 0.01)``), which scales their error too; ``over_input``: the
    positions are an input of unknown range (a mass, a time), no grid: divided by wavelengths, or
    multiplied by bands of a radian or more per unit, each angle moves by its relative rounding;
    ``magnitude``: the positions are continuous values the code bounds so (``extent`` follows it),
    which the message names instead of a last position."""
    if factor is not None and factor.dyadic:
        # octave bands (2.0 ** arange(n)): bfloat16 holds them exactly, and float16 up to 2**15
        largest = factor.magnitude if factor.magnitude is not None else \
            max(map(abs, factor.series.exact)) if factor.series is not None and factor.series.exact else None
        if largest is not None and largest > FLOAT16_LARGEST:
            return (f"they are powers of two up to {largest:.3g}: bfloat16 holds them exactly, but float16 "
                    f"(model.half()) turns those past {FLOAT16_LARGEST} into inf, and cos/sin of their angles "
                    f"into NaN")
        return None
    if factor is not None and factor.has(Role.HARMONICS):  # (of a continuous value, not a count of positions)
        return relative_error(float16, "the frequencies are harmonics (whole multiples of one frequency)")
    table = frequency_table(factor, divisor, default_dtype) if factor is not None else None
    if table is None and drawn_at_random(factor):
        return random_frequencies(float16)
    if table is None and not divisor and bands_above_one(factor):
        # (bands that grow with the channel, pi * linspace(1, res / 2, n), multiply: no table of at
        # most one; a growing divisor, 10000 ** (2i / d), is that table inverted)
        if extent is not None and factor.magnitude is not None and factor.magnitude > 1:
            largest = (extent - 1) * factor.magnitude
            error = (extent - 1) * _half_step(factor.magnitude, 11 if float16 else 8)  # (the largest band's rounding)
            if error < NEGLIGIBLE_ANGLE_ERROR:
                return None
            return (f"the angles reach {largest:.3g} rad (bands up to {factor.magnitude:.3g}), and rounding the bands "
                    f"moves them by up to {error:.2g} rad")
        return relative_error(float16, "the frequencies are Fourier bands above one, and the code fixes no "
                                       "table")
    if over_input and extent is None and divisor:
        return relative_error(float16, "the wavelengths divide an input whose range the code does not give")
    if over_input and extent is None and table is not None and _every_band_a_radian_or_more(table) \
            and any((fp16 if float16 else bf16)(v) != v for v in table.exact):  # (whole orders 1..5 stay)
        # (integer positions would turn by a radian or more a step: the input is continuous, a time
        # or a coordinate, and the code does not say its range)
        return relative_error(float16, f"the frequencies ({table.words}) are a radian or more per unit, bands of "
                                       f"an input whose range the code does not give")
    # An input (a time, a noise level), no grid, of a range the code does not give: the message
    # says that it assumes the range, not that there are positions.
    unbounded_input = over_input and extent is None
    if extent is None and table is None and not float16 and scale >= 1:
        return INPUT_ERROR_AT_8K if unbounded_input and unknown == ANGLE_ERROR_AT_8K else unknown
    table = table or ASSUMED_FREQUENCIES
    last = (ASSUMED_POSITIONS if extent is None else extent) - 1
    error = angle_error(last, table, product_16bit, float16) * min(scale, 1.0)
    if error < NEGLIGIBLE_ANGLE_ERROR:
        return None
    if unbounded_input:
        assumed = f"; the code does not give the range of its input, positions or times: up to {last} is assumed"
    else:
        assumed = f"; {ASSUMED_POSITIONS} positions are assumed" if extent is None else ""
    if float16:
        assumed += "; float16"
    if scale < 1:
        assumed += f"; the angles are scaled by {scale:.3g} on their way to cos/sin"
    if extent is None and unknown == ANGLE_ERROR_BY_818 and error >= 1 and scale >= 1:
        first = _first_position(lambda k: angle_error(k, table, product_16bit, float16) >= 1, last)
        return f"the angle error passes 1 rad by position {first} ({table.words})"
    if magnitude is not None:
        return f"the angle error reaches {min(error, math.pi):.2g} rad for positions up to {magnitude:.3g} " \
               f"({table.words}{assumed})"
    where = f"an input of {last}" if unbounded_input else f"position {last}"
    if error >= math.pi:
        return f"the angle error reaches pi {'at' if unbounded_input else 'by'} {where} ({table.words}{assumed})"
    return f"the angle error reaches {error:.2g} rad at {where} ({table.words}{assumed})"


def _every_band_a_radian_or_more(table: FrequencyTable) -> bool:
    frequencies = [v for v in table.exact if v]
    return bool(frequencies) and min(abs(f) for f in frequencies) >= 1


def drawn_at_random(factor) -> bool:
    """Whether the frequencies ``factor`` holds are computed from a random draw (learned Fourier
    features: ``nn.Parameter(torch.randn(n))``), not from a table the code fixes."""
    return factor is not None and RANDOM_DRAW in factor.products


def bands_above_one(factor) -> bool:
    """Whether ``factor`` holds Fourier bands that grow with the channel (``2 ** arange(n)``,
    ``pi * linspace(1, res / 2, n)``) rather than decay."""
    return factor is not None and (factor.has(Role.GROWTH) or factor.has(Role.GROWTH2) or (factor.magnitude or 0) > 1)


def random_frequencies(float16: bool = False, product_too: bool = False) -> str:
    """What rounding, of frequencies drawn at random or of the continuous values they multiply
    (times, scales: their range unknown), does to the angles: a relative error of each."""
    return relative_error(float16, "the frequencies are drawn at random, so the code fixes no table", product_too)


def relative_error(float16: bool, why: str, product_too: bool = False) -> str:
    """Rounding's relative error of each angle, where ``why`` no table of frequencies is known: of
    one operand, or (``product_too``: an autocast-lowered product) of both operands and the product,
    each by up to half a step, 2**-bits of the value at the bottom of its binade."""
    bits = 11 if float16 else 8
    if not product_too:
        share, example = ("0.05%", "0.01 rad") if float16 else ("0.4%", "0.08 rad")
        return f"{why}: {bits} significant bits move each angle by up to {share} of itself ({example} at 20 rad)"
    relative = (1 + 2.0 ** -bits) ** 3 - 1
    return (f"{why}: rounding both operands and the product to {bits} significant bits moves each angle by up "
            f"to {100 * relative:.2g}% of itself ({20 * relative:.2g} rad at 20 rad)")


def _first_position(reached, last: int) -> int:
    """The first position in 1..last where ``reached`` holds (it holds at ``last``, and from
    there on once it holds), by bisection."""
    low, high = 0, last
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reached(middle) else (middle, high)
    return high


def rounded_continuous_positions(magnitude: float, factor, float16: bool = False,
                                 largest_angle: Optional[float] = None) -> Optional[str]:
    """What 16 bits do to continuous positions of at most ``magnitude`` (a normalised grid, diffusion
    times ``1000 * t``) multiplied by ``factor``'s frequencies (the code's table, else at most 1), or
    into angles up to ``largest_angle`` (the table times what scales the angles on their way to cos/sin):
    None when the angles move by under 0.03 rad."""
    table = frequency_table(factor)
    frequency = max(table.exact) if table is not None else 1.0
    scaled = largest_angle is not None and magnitude and largest_angle / magnitude > frequency
    if scaled:
        frequency = largest_angle / magnitude
    step = _half_step(magnitude, 11 if float16 else 8)
    if step * frequency < NEGLIGIBLE_ANGLE_ERROR:
        return None
    angles = f", and angles up to {largest_angle:.3g} rad by up to {step * frequency:.2g} rad" if scaled else ""
    return (f"values up to {magnitude:.4g} keep {11 if float16 else 8} significant bits in "
            f"{'float16' if float16 else 'bfloat16'}: they move by up to {step:.2g}{angles}")


def unknown_kind(extent, float16: bool = False) -> str:
    """What bfloat16 (or ``float16``) does to positions of unknown kind below ``extent`` (None: unknown)."""
    if not float16 and (extent is None or extent > 1 << 20):
        return UNKNOWN_KIND
    bits, name, exact, share, rounded = (11, "float16", 2048, "0.05%", fp16) if float16 else (8, "bfloat16", 256, "0.4%", bf16)
    count = ASSUMED_POSITIONS if extent is None or extent > 1 << 20 else extent
    distinct = len({rounded(k) for k in range(count)})
    integers = f"integers up to {count - 1}" if extent is not None else "integer positions"
    return (f"they keep {bits} significant bits in {name}: {integers} collide past {exact} ({distinct} of "
            f"{count} stay distinct), coordinates lose up to {share} of their value")


def distinct_positions(extent, float16: bool = False) -> str:
    """What bfloat16 (or ``float16``) keeps of the positions 0..extent-1: the assumed 8192 when the
    code does not say how many there are, else the count for its literal grid."""
    if not float16 and (extent is None or extent > 1 << 20):
        return DISTINCT_BF16_8K
    if float16:
        count = ASSUMED_POSITIONS if extent is None or extent > 1 << 16 else extent
        distinct = len({fp16(k) for k in range(count)})
        return f"only {distinct} of {'its ' if extent is not None else ''}{count} positions stay distinct in float16"
    distinct = len({bf16(k) for k in range(extent)})
    return f"only {distinct} of its {extent} positions stay distinct in bfloat16"


WHEN_16BIT = {
    Prec.LOW: "",
    Prec.CONVERTED: "after model.to(torch.bfloat16) ",
    Prec.ACTIVATION: "with bfloat16 activations ",
    Prec.DEFAULT: "under a bfloat16 default dtype ",
}


def when(prec) -> str:
    """'after model.to(torch.bfloat16) ' and the like: the condition that makes ``prec`` 16-bit."""
    return WHEN_16BIT.get(prec, "")
