"""ALiBi built once per model and cached at the activation dtype: slopes 1/2^(k * 8/n) for the
next power of two of the head count, distances as int32 offsets from the last key."""
import math

import torch
import torch.nn as nn


def slopes_for(n_heads, max_bias=8, device=None):
    padded = 1 << math.ceil(math.log2(n_heads))
    k = torch.arange(1, padded + 1, dtype=torch.float32, device=device) * (max_bias / padded)
    slopes = torch.pow(2, -k)
    if padded != n_heads:
        slopes = torch.cat([slopes[1::2], slopes[0::2]])[:n_heads]
    return slopes.reshape(1, n_heads, 1, 1)


def distance_bias(n_heads, length, symmetric=False, max_bias=8, device=None, dtype=None):
    offsets = torch.arange(1 - length, 1, dtype=torch.int32, device=device).reshape(1, 1, 1, length)
    if symmetric:
        rows = torch.arange(1 - length, 1, dtype=torch.int32, device=device).reshape(1, 1, length, 1)
        offsets = -(offsets - rows).abs()
    return (offsets * slopes_for(n_heads, max_bias, device)).to(dtype=dtype)


class CachedBiasBlock(nn.Module):
    def __init__(self, width=2048, n_heads=16, max_len=2048, max_bias=8):
        super().__init__()
        self.n_heads = n_heads
        self.max_len = max_len
        self.max_bias = max_bias
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.bias = None

    def _bias(self, device, dtype):
        if self.bias is None or self.bias.dtype != dtype:
            self.bias = distance_bias(self.n_heads, self.max_len, max_bias=self.max_bias, device=device, dtype=dtype)
        return self.bias

    def forward(self, x):
        b, t, width = x.shape
        q, k, v = (part.view(b, t, self.n_heads, -1).transpose(1, 2) for part in self.qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + self._bias(x.device, x.dtype)[..., -t:]
        return self.out((scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, width))
