"""A rotary embedding written to survive bf16 training: frequencies and positions in float32,
the angle product with autocast disabled, and only cos/sin cast to the activation dtype."""
from typing import Tuple

import torch
from torch import nn

AUTOCAST_DEVICES = ("cuda", "cpu", "xpu")


class Float32Rotary(nn.Module):
    def __init__(self, dim: int, base: float = 500000.0):
        super().__init__()
        self.dim = dim
        self.base = base

    def _inv_freq(self, device: torch.device) -> torch.Tensor:
        exponent = torch.arange(0, self.dim, 2, device=device, dtype=torch.float32) / self.dim
        return 1.0 / (self.base ** exponent)

    @torch.no_grad()
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        inv_freq = self._inv_freq(x.device)
        device_type = x.device.type if x.device.type in AUTOCAST_DEVICES else "cpu"
        with torch.autocast(device_type=device_type, enabled=False):
            positions = position_ids.to(torch.float32)
            freqs = positions[..., None] * inv_freq
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)
