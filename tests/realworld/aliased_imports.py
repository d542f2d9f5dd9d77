"""Unusual import spellings: torch under another name, star imports, late imports."""
import torch as T
import torch.nn as tnn
from torch import float16 as half_t
from torch.nn.functional import *  # noqa: F401,F403


class AliasedRotary(tnn.Module):
    def __init__(self, dim, base=10_000):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (T.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, x):
        n = x.shape[-2]
        t = T.arange(n, device=x.device).to(half_t)
        angles = T.outer(t, self.inv_freq.to(half_t))
        return T.cat([angles, angles], -1).cos(), T.cat([angles, angles], -1).sin()


def late_import_rotary(dim, n):
    import torch

    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    pos = torch.arange(n, dtype=torch.bfloat16)
    return pos[:, None] * inv[None, :]
