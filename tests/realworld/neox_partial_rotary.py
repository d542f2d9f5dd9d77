"""Attention in which only the first part of each head is rotated (a "rotary fraction"), with
one fused query/key/value projection. The cos/sin cache is kept as plain attributes and
rebuilt when a longer sequence shows up; the model is served in fp16 via .half()."""
import torch
from torch import nn


class PartialRotary(nn.Module):
    def __init__(self, rotary_dims, max_len, theta=10000, device=None):
        super().__init__()
        steps = torch.arange(0, rotary_dims, 2).float().to(device)
        self.register_buffer("inv_freq", 1.0 / (theta ** (steps / rotary_dims)))
        self.cached_len = 0
        self.cos = self.sin = None
        self._fill(max_len, self.inv_freq.device)

    def _fill(self, length, device):
        self.cached_len = length
        pos = torch.arange(length, device=device, dtype=self.inv_freq.dtype)
        angles = torch.einsum("n,d->nd", pos, self.inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.cos = angles.cos()[None, None]
        self.sin = angles.sin()[None, None]

    def forward(self, like, length):
        if length > self.cached_len:
            self._fill(length, like.device)
        return self.cos[:, :, :length].to(like.device), self.sin[:, :, :length].to(like.device)


def _turn(x):
    left, right = x.chunk(2, dim=-1)
    return torch.cat((-right, left), dim=-1)


class FractionalRotaryAttention(nn.Module):
    def __init__(self, width=2048, heads=16, rotary_fraction=0.25, max_len=2048, theta=10000):
        super().__init__()
        self.heads = heads
        self.head_dim = width // heads
        self.rotary_dims = int(self.head_dim * rotary_fraction)
        self.rotary = PartialRotary(self.rotary_dims, max_len, theta)
        self.fused = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.scale = self.head_dim ** -0.5

    def forward(self, x, past=None):
        b, t, _ = x.shape
        q, k, v = self.fused(x).view(b, t, self.heads, 3 * self.head_dim).permute(0, 2, 1, 3).chunk(3, dim=-1)
        start = past[0].shape[-2] if past is not None else 0
        cos, sin = self.rotary(v, start + t)
        cos, sin = cos[:, :, start:start + t], sin[:, :, start:start + t]
        r = self.rotary_dims
        q = torch.cat((q[..., :r] * cos + _turn(q[..., :r]) * sin, q[..., r:]), dim=-1)
        k = torch.cat((k[..., :r] * cos + _turn(k[..., :r]) * sin, k[..., r:]), dim=-1)
        if past is not None:
            k, v = torch.cat((past[0], k), dim=-2), torch.cat((past[1], v), dim=-2)
        weights = (q @ k.transpose(-1, -2) * self.scale).softmax(dim=-1, dtype=torch.float32).to(v.dtype)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, t, -1)), (k, v)


def for_serving(device="cuda"):
    return FractionalRotaryAttention().half().to(device).eval()
