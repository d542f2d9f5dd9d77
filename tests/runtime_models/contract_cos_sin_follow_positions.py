"""A guidance embedding whose cos/sin are cast to the guidance's own dtype (`emb.to(t)`) before a
projection: float32 guidance would hand a bfloat16 model float32 features (FLUX-style)."""
import math

import torch
from torch import nn


def guidance_embedding(t, dim, max_period=10000):
    t = 1000.0 * t
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half).to(t.device)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1).to(t)


class Guided(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.guidance_in = nn.Linear(64, dim)

    def forward(self, x, guidance):
        return x + self.guidance_in(guidance_embedding(guidance, 64))


def denoise(model: Guided, x, guidance=3.5):
    guidance_vec = torch.full((x.shape[0],), guidance, device=x.device, dtype=x.dtype)
    return model(x, guidance_vec)
