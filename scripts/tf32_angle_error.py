"""Measure what TF32 matmuls do to the RoPE angle product, on CPU, with poslint's TF32 emulation
(poslint.runtime.modes.Tf32Matmuls: GEMM inputs rounded to 10 mantissa bits, float32 accumulation).

For a context of L positions, dim 128, base 10000, it compares the angle table of
`inv_freq[None, :, None] @ positions[None, None, :]` (a bmm) and of the broadcast product
`inv_freq[None, :, None] * positions[None, None, :]` with a float64 reference, and checks that
without TF32 the two products are bit-identical. Prints a Markdown table (docs/precision.md).

    python scripts/tf32_angle_error.py
"""

from __future__ import annotations

import math

import torch

from poslint.runtime.modes import Tf32Matmuls


def _angle_error(angles: torch.Tensor, reference: torch.Tensor) -> float:
    diff = torch.remainder(angles.double() - reference + math.pi, 2 * math.pi) - math.pi
    return diff.abs().max().item()


def measure(seq_len: int, dim: int = 128, base: float = 10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    positions = torch.arange(seq_len, dtype=torch.float32)
    reference = inv_freq.double()[:, None] * positions.double()[None, :]
    a, b = inv_freq[None, :, None], positions[None, None, :]
    identical = torch.equal(a @ b, a * b)
    with Tf32Matmuls():
        gemm = (a @ b)[0]
        broadcast = (a * b)[0]
    distinct = torch.unique(gemm[0]).numel()  # row 0: frequency 1, the angle is the position itself
    return identical, distinct, _angle_error(gemm, reference), _angle_error(broadcast, reference)


def main() -> None:
    print("| L | matmul = broadcast product without TF32 | distinct positions through the TF32 matmul "
          "| max angle error, TF32 matmul (rad) | max angle error, broadcast product (rad) |")
    print("|---|---|---|---|---|")
    for seq_len in (2048, 4096, 8192, 32768):
        identical, distinct, gemm, broadcast = measure(seq_len)
        print(f"| {seq_len} | {'bit-identical' if identical else 'DIFFERENT'} | {distinct} of {seq_len} "
              f"| {gemm:.3g} | {broadcast:.3g} |")


if __name__ == "__main__":
    main()
