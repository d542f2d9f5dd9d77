"""Learned Fourier features of coordinates through an nn.Linear: the positions' finding and the
autocast one get no fix. A `.float()` of the layer would convert its weights for good (and a
module has no `.device` to name), and float32 coordinates beside the converted weight make
F.linear raise in a bf16 model."""

import torch
from torch import nn


class CoordinateFeatures(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.proj = nn.Linear(2, dim // 2, bias=False)
        nn.init.normal_(self.proj.weight, std=0.25)

    def forward(self, tokens, coords):
        angles = self.proj(coords.to(tokens.dtype))
        return tokens + torch.cat([angles.cos(), angles.sin()], dim=-1)


class Float32CoordinateFeatures(CoordinateFeatures):
    def forward(self, tokens, coords):
        angles = self.proj(coords.float().to(tokens.device))
        return tokens + torch.cat([angles.cos(), angles.sin()], dim=-1).to(tokens.dtype)
