"""Measure the RoPE and ALiBi errors that rule messages quote, and write the tables into
docs/precision.md between the markers below.

RoPE: head dim 128, base 10000, positions 0..8191, against float64. ALiBi: 32 heads, slopes
2 ** (-8 / 32 * (i + 1)), 4096 keys, the last query's row, its 64 nearest keys.

    python scripts/rope_alibi_error.py          # print the tables
    python scripts/rope_alibi_error.py --write  # rewrite them in docs/precision.md
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch

BEGIN = "<!-- rope-alibi-error: begin (scripts/rope_alibi_error.py) -->"
END = "<!-- rope-alibi-error: end -->"
DOC = Path(__file__).resolve().parent.parent / "docs" / "precision.md"
DIM, BASE, POSITIONS = 128, 10000.0, 8192
HEADS, KEYS, NEAREST = 32, 4096, 64


def _wrapped(error: torch.Tensor) -> torch.Tensor:
    return torch.remainder(error + math.pi, 2 * math.pi).sub(math.pi).abs()


def _rope_rows():
    exponents = torch.arange(0, DIM, 2, dtype=torch.float64) / DIM
    inv64 = 1.0 / (BASE ** exponents)
    ref = torch.outer(torch.arange(POSITIONS, dtype=torch.float64), inv64)
    inv32 = inv64.float()

    def bf16_everything(low):
        return torch.outer(torch.arange(POSITIONS, dtype=low), inv32.to(low)).double()

    # name: (angles, the dtype cos is used in)
    rows = {
        "`inv_freq`, positions and product in bfloat16 (a converted buffer and `dtype=inv_freq.dtype`)":
            (bf16_everything(torch.bfloat16), torch.bfloat16),
        "`inv_freq` rounded to bfloat16, then `.float()`; positions and product in float32 (POS106)":
            (torch.outer(torch.arange(POSITIONS, dtype=torch.float32), inv32.bfloat16().float()).double(),
             torch.float32),
        "everything float32": (torch.outer(torch.arange(POSITIONS, dtype=torch.float32), inv32).double(), torch.float32),
        "the first row in float16": (bf16_everything(torch.float16), torch.float16),
    }
    for name, (angles, cos_dtype) in rows.items():
        error = _wrapped(angles - ref)
        cos = angles.cos().to(cos_dtype)
        repeats = (cos[1:] == cos[:-1]).all(dim=1).float().mean().item()
        worst = error.max(dim=1).values
        past_one = next((m for m in range(POSITIONS) if worst[m] > 1.0), None)
        yield name, error.max().item(), repeats, past_one


def _alibi_rows():
    slopes = torch.tensor([2 ** (-8 / HEADS * (i + 1)) for i in range(HEADS)], dtype=torch.float64)
    keys = torch.arange(KEYS, dtype=torch.float64)
    query = KEYS - 1
    ref = slopes[:, None] * (keys[None, :] - query)  # relative to the query: the exact bias
    nearest = slice(KEYS - NEAREST, KEYS)

    def absolute(dtype, product_dtype=torch.float32):
        bias = slopes.to(product_dtype)[:, None] * keys.to(product_dtype)[None, :]
        return bias.to(dtype)

    rows = {
        "slope x absolute key, float32, then `.to(bfloat16)` (Bloom-like)": absolute(torch.bfloat16),
        "the same, all in bfloat16": absolute(torch.bfloat16, torch.bfloat16),
        "slope x (key - query), relative, then bfloat16": (slopes[:, None] * (keys[None, :] - query)).float()
        .to(torch.bfloat16),
        "slope x absolute key, float16": absolute(torch.float16, torch.float16),
        "slope x absolute key, float32": absolute(torch.float32),
    }
    for name, bias in rows.items():
        near = bias[:, nearest].double()
        distinct = min(len(torch.unique(row)) for row in near)
        # Softmax is shift-invariant per row: compare with the exact bias after aligning the diagonal.
        aligned = near - near[:, -1:]
        error = (aligned - ref[:, nearest]).abs().max().item()
        yield name, distinct, error


def table() -> str:
    lines = [f"RoPE, head dim {DIM}, base {BASE:g}, positions 0..{POSITIONS - 1}, against float64:", "",
             "| how the angles are computed | max angle error (rad) | rows of cos equal to the previous row "
             "| angle error passes 1 rad from position |", "|---|---:|---:|---:|"]
    for name, error, repeats, past_one in _rope_rows():
        lines.append(f"| {name} | {error:.3g} | {repeats:.0%} | {past_one if past_one is not None else '-'} |")
    lines += ["", f"ALiBi, {HEADS} heads, slopes 2 ** (-8 / {HEADS} * (i + 1)), {KEYS} keys, the last query's "
                  f"{NEAREST} nearest keys:", "",
              "| how the bias is built | distinct values among the nearest keys (worst head) "
              "| worst error against the exact bias |", "|---|---:|---:|"]
    for name, distinct, error in _alibi_rows():
        lines.append(f"| {name} | {distinct} | {error:.3g} |")
    return "\n".join(lines)


def write_doc(path: Path = DOC) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END)
    path.write_text(text[:start] + f"{BEGIN}\n{table()}\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write_doc()
    else:
        print(table())
