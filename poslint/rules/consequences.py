"""The measured consequences that rule messages quote (../shared/PRECISION.md)."""

import math
import struct

from poslint.analysis import Prec

DISTINCT_BF16_8K = "only 897 of 8192 positions stay distinct in bfloat16"
# What bfloat16 does to positions of unknown kind (an input that may hold integers or coordinates).
UNKNOWN_KIND = ("they keep 8 significant bits in bfloat16: integer positions collide past 256 (897 of 8192 "
                "stay distinct), coordinates lose up to 0.4% of their value")
# Integers up to this bound are exact in bfloat16 (8 significant bits).
BF16_EXACT_UP_TO = 256


def _bf16(x: float) -> int:
    """``x`` rounded to bfloat16 (round to nearest, ties to even), as its 16 bits."""
    bits = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def _bf16_float(x: float) -> float:
    """``x`` rounded to bfloat16, as a number."""
    return struct.unpack("<f", struct.pack("<I", _bf16(x) << 16))[0]


# Frequencies rounded to bfloat16 move angle k by k times their worst rounding: with head dim 128
# and base 10000 that is 1.22e-3 rad per position (1 rad by position 818; ../shared/PRECISION.md).
ANGLE_ERROR_PER_POSITION = max(abs(f - _bf16_float(f)) for f in (10000.0 ** (-2 * i / 128) for i in range(64)))
# An angle error below this is negligible (the audit's threshold: benchmarks/AUDIT.md).
NEGLIGIBLE_ANGLE_ERROR = 0.03
# What rounded frequencies do when the code does not say how many positions there are.
ANGLE_ERROR_AT_8K = "the angle error reaches pi by position 8191 (head dim 128, base 10000)"
ANGLE_ERROR_BY_818 = "the angle error passes 1 rad by position 818 (head dim 128, base 10000)"


# How many positions a grid is assumed to hold when the code does not say.
ASSUMED_POSITIONS = 8192


def grid_extent(facts, product):
    """The extent of ``product``'s positions and the words for what it assumes: a literal grid's
    own; for one axis of a grid of several (an image's rows and columns) sized at run time, the
    side of such a grid of the assumed 8192 positions in all; else None (8192 in a row)."""
    extent = product.positions.extent
    axes = facts.axes_of(product)
    if extent is not None or axes < 2:
        return extent, ""
    side = math.ceil(ASSUMED_POSITIONS ** (1 / axes))
    return side, f"; a {axes}-axis grid of {ASSUMED_POSITIONS} positions ({side} per axis) is assumed"


def rounded_frequencies(extent, unknown: str):
    """What frequencies rounded to bfloat16 do to the angles of positions 0..extent-1: ``unknown``
    when the code does not say how many positions there are, None when the error is negligible,
    else the computed error."""
    if extent is None:
        return unknown
    error = (extent - 1) * ANGLE_ERROR_PER_POSITION
    if error < NEGLIGIBLE_ANGLE_ERROR:
        return None
    if error >= math.pi:
        return f"the angle error reaches pi by position {extent - 1} (head dim 128, base 10000)"
    return f"the angle error reaches {error:.2g} rad at position {extent - 1} (head dim 128, base 10000)"


def distinct_positions(extent) -> str:
    """What bfloat16 keeps of the positions 0..extent-1: the assumed 8192 when the code does not
    say how many there are, else the count for its literal grid."""
    if extent is None or extent > 1 << 20:
        return DISTINCT_BF16_8K
    distinct = len({_bf16(k) for k in range(extent)})
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
