"""Functional rotary helpers written for TorchScript: annotated, no classes, Optional arguments,
and a 'compression' of positions for longer contexts."""
from typing import List, Optional, Tuple

import torch


@torch.jit.script
def cos_sin_cache(length: int, rotary_dims: int, theta: int = 10000, compress: int = 1,
                  device: Optional[torch.device] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (theta ** (torch.arange(0, rotary_dims, 2, device=device).float() / rotary_dims))
    where = torch.arange(length, device=device) / compress
    phase = torch.outer(where, inv).repeat(1, 2)
    return phase.cos(), phase.sin()


@torch.jit.script
def rotate_heads(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.size(-1) // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x * cos + turned * sin).to(dtype=x.dtype)


def packed_positions(lengths: List[int], device: Optional[torch.device] = None) -> torch.Tensor:
    return torch.cat([torch.arange(n, device=device) for n in lengths])


def fp16_cache(length: int, rotary_dims: int, dtype: torch.dtype = torch.float16):
    cos, sin = cos_sin_cache(length, rotary_dims)
    return cos.to(dtype), sin.to(dtype)
