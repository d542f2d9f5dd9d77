"""Linear attention biases (ALiBi) with per-head slopes; the key positions are counted from the
attention mask, so left padding does not shift them, and the bias is built once per forward."""
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


def head_slopes(n_heads: int, device=None) -> torch.Tensor:
    """Geometric slopes 2^(-8/n), 2^(-16/n), ...; a head count that is not a power of two
    borrows every other slope of the next power of two."""
    pow2 = 2 ** math.floor(math.log2(n_heads))
    ratio = torch.tensor(2.0 ** (-8.0 / pow2), device=device, dtype=torch.float32)
    slopes = ratio ** torch.arange(1, pow2 + 1, device=device, dtype=torch.int32)
    if pow2 < n_heads:
        finer = torch.tensor(2.0 ** (-4.0 / pow2), device=device, dtype=torch.float32)
        odd = torch.arange(1, 2 * (n_heads - pow2), 2, device=device, dtype=torch.int32)
        slopes = torch.cat([slopes, finer ** odd])
    return slopes


def mask_positions_bias(mask: torch.Tensor, n_heads: int, dtype: torch.dtype) -> torch.Tensor:
    """[batch * heads, 1, keys]: each key's slope times its index among the real tokens."""
    batch, keys = mask.shape
    index = (mask.cumsum(dim=-1) - 1) * mask  # padding keeps index 0
    bias = head_slopes(n_heads, mask.device)[None, :, None] * index[:, None, :]
    return bias.reshape(batch * n_heads, 1, keys).to(dtype)


class BiasedAttention(nn.Module):
    def __init__(self, width: int = 1024, n_heads: int = 16, dropout: float = 0.0):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = width // n_heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, causal: Optional[torch.Tensor] = None):
        b, t, width = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).unbind(dim=2)
        q = q.transpose(1, 2).reshape(b * self.n_heads, t, self.head_dim)
        k = k.permute(0, 2, 3, 1).reshape(b * self.n_heads, self.head_dim, t)
        v = v.transpose(1, 2).reshape(b * self.n_heads, t, self.head_dim)
        scores = torch.baddbmm(bias, q, k, alpha=self.head_dim ** -0.5).view(b, self.n_heads, t, t)
        if causal is not None:
            scores = scores.masked_fill(causal, torch.finfo(scores.dtype).min)
        weights = self.drop(F.softmax(scores, dim=-1, dtype=torch.float32).to(x.dtype))
        mixed = torch.bmm(weights.view(b * self.n_heads, t, t), v).view(b, self.n_heads, t, self.head_dim)
        return self.out(mixed.transpose(1, 2).reshape(b, t, width))


class BiasedLM(nn.Module):
    def __init__(self, vocab=250880, width=1024, n_heads=16, depth=2):
        super().__init__()
        self.n_heads = n_heads
        self.embed = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(BiasedAttention(width, n_heads) for _ in range(depth))

    def forward(self, tokens, mask=None):
        x = self.embed(tokens)
        if mask is None:
            mask = torch.ones(tokens.shape, device=tokens.device)
        bias = mask_positions_bias(mask, self.n_heads, x.dtype)
        for layer in self.layers:
            x = x + layer(x, bias)
        return x
