"""Measure the float32 RoPE angle error at long context, and the two fixes, on CPU.

For each context length L and rotary base (dim 128), positions are sampled: the 16384 highest
positions below L and 16384 drawn uniformly from [0, L) (seeded), so memory stays small. Each
angle table is compared with a float64 reference, p * base**(-2i/d) computed in float64 from
exact integer positions; the error is |angle - reference| reduced mod 2*pi, the worst over the
samples and frequencies. The float64 table is the reference's own computation, so its column is
measured against mpmath instead (50 digits), on the 64 highest positions and 64 of the others:
that is also the bound on the reference's own error.

* float32: the usual code, `inv_freq = 1 / base ** (arange(0, d, 2).float() / d)` and
  `positions.float()[:, None] * inv_freq[None, :]`, all float32;
* float64 table (fix 1): the same in float64, cos/sin cast to float32 at the end (the error
  column is the angle error before the cast; the cast adds at most 2**-24 to cos/sin);
* range reduction (fix 2): p = q*K + r with K = 4096; angle = (q * ((K*theta) mod 2pi)) mod 2pi
  + r*theta in float32, with (K*theta) mod 2pi precomputed in float64 and rounded to float32.

Prints Markdown tables (docs/precision.md).

    python scripts/long_context_error.py
"""

from __future__ import annotations

import math

import mpmath
import torch

LENGTHS = (131072, 1 << 20, 4 << 20, 10_000_000)
BASES = (10_000.0, 500_000.0, 1_000_000.0)
DIM = 128
SAMPLES = 16384
K = 4096


def sampled_positions(length: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(length)
    top = torch.arange(max(0, length - SAMPLES), length, dtype=torch.int64)
    spread = torch.randint(0, length, (SAMPLES,), generator=gen, dtype=torch.int64)
    return torch.cat([top, spread])


def wrapped(angles: torch.Tensor, reference: torch.Tensor) -> float:
    diff = torch.remainder(angles.double() - reference + math.pi, 2 * math.pi) - math.pi
    return diff.abs().max().item()


def errors(length: int, base: float):
    p = sampled_positions(length)
    index = torch.arange(0, DIM, 2)
    reference = p.double()[:, None] * (1.0 / base ** (index.double() / DIM))[None, :]

    inv_freq32 = 1.0 / (base ** (index.float() / DIM))
    float32 = p.float()[:, None] * inv_freq32[None, :]

    inv_freq64 = 1.0 / (base ** (index.double() / DIM))
    float64 = p.double()[:, None] * inv_freq64[None, :]

    step = torch.remainder(K * inv_freq64, 2 * math.pi).float()
    q, r = (p // K).float(), (p % K).float()
    reduced = torch.remainder(q[:, None] * step[None, :], 2 * math.pi) + r[:, None] * inv_freq64.float()[None, :]

    return wrapped(float32, reference), float64_error(p, base, float64), wrapped(reduced, reference)


def float64_error(p: torch.Tensor, base: float, float64: torch.Tensor) -> float:
    """The float64 table's worst angle error against mpmath, on 128 of the sampled positions."""
    mpmath.mp.dps = 50
    rows = list(range(SAMPLES - 64, SAMPLES)) + list(range(SAMPLES, SAMPLES + 64))
    two_pi = 2 * mpmath.pi
    worst = mpmath.mpf(0)
    for row in rows:
        position = int(p[row])
        for i in range(DIM // 2):
            exact = position * mpmath.power(mpmath.mpf(int(base)), mpmath.mpf(-2 * i) / DIM)
            diff = mpmath.fmod(mpmath.mpf(float(float64[row, i])) - exact + mpmath.pi, two_pi)
            worst = max(worst, abs((diff + two_pi if diff < 0 else diff) - mpmath.pi))
    return float(worst)


def _label(length: int) -> str:
    return f"{length // 1024}k" if length < 1 << 20 else (f"{length >> 20}M" if length % (1 << 20) == 0
                                                          else f"{length / 1e6:g}M (10,000,000)")


def main() -> None:
    print("| context | base | float32 (rad) | float64 table (rad) | range reduction, K=4096 (rad) |")
    print("|---|---|---|---|---|")
    for length in LENGTHS:
        for base in BASES:
            f32, f64, red = errors(length, base)
            print(f"| {_label(length)} | {base:,.0f} | {f32:.3g} | {f64:.2g} | {red:.3g} |")


if __name__ == "__main__":
    main()
