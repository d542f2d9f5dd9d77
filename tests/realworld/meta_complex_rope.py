"""Rotary embeddings as complex multiplications: the rotations are unit complex numbers
computed once for the whole context, and queries/keys are viewed as complex pairs."""
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Dims:
    width: int = 4096
    depth: int = 32
    heads: int = 32
    kv_heads: Optional[int] = None
    vocab: int = 32000
    context: int = 2048


def unit_rotations(head_dim: int, length: int, theta: float = 10000.0) -> torch.Tensor:
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    steps = torch.arange(length, device=inv.device)
    phase = torch.outer(steps, inv).float()
    return torch.polar(torch.ones_like(phase), phase)  # complex64, [length, head_dim / 2]


def as_complex(x: torch.Tensor) -> torch.Tensor:
    return torch.view_as_complex(x.float().unflatten(-1, (-1, 2)))


def spin(q: torch.Tensor, k: torch.Tensor, rotations: torch.Tensor):
    rot = rotations[None, :, None, :]  # broadcast over batch and heads: [1, time, 1, pairs]
    q_out = torch.view_as_real(as_complex(q) * rot).flatten(-2)
    k_out = torch.view_as_real(as_complex(k) * rot).flatten(-2)
    return q_out.type_as(q), k_out.type_as(k)


class ComplexRotaryAttention(nn.Module):
    def __init__(self, dims: Dims):
        super().__init__()
        self.heads = dims.heads
        self.kv_heads = dims.kv_heads or dims.heads
        self.head_dim = dims.width // dims.heads
        self.wq = nn.Linear(dims.width, self.heads * self.head_dim, bias=False)
        self.wkv = nn.Linear(dims.width, 2 * self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.heads * self.head_dim, dims.width, bias=False)

    def forward(self, x, rotations, mask=None):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k, v = self.wkv(x).view(b, t, 2, self.kv_heads, self.head_dim).unbind(dim=2)
        q, k = spin(q, k, rotations)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        weights = F.softmax(scores.float(), dim=-1).type_as(q)
        return self.wo(torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, t, -1))


class ComplexRotaryLM(nn.Module):
    def __init__(self, dims: Dims):
        super().__init__()
        self.embed = nn.Embedding(dims.vocab, dims.width)
        self.layers = nn.ModuleList(ComplexRotaryAttention(dims) for _ in range(dims.depth))
        self.rotations = unit_rotations(dims.width // dims.heads, 2 * dims.context)

    @torch.inference_mode()
    def forward(self, tokens, start=0):
        t = tokens.shape[1]
        x = self.embed(tokens)
        rotations = self.rotations.to(x.device)[start:start + t]
        mask = None
        if t > 1:
            mask = torch.full((t, start + t), float("-inf"), device=x.device).triu(start + 1).type_as(x)
        for layer in self.layers:
            x = x + layer(x, rotations, mask)
        return x.float()
