"""Axial 2D rotary embeddings for image patches: half of each head's pairs turn with the row
index, the other half with the column index; frequencies for "text-like" or "pixel" scales."""
from math import pi

import torch
from torch import nn


def grid_angles(rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """[H, F] and [W, F] angles -> [H * W, 2F]: every patch gets its row's and its column's."""
    h, w = rows.shape[0], cols.shape[0]
    return torch.cat([rows[:, None, :].expand(h, w, -1), cols[None, :, :].expand(h, w, -1)], dim=-1).flatten(0, 1)


def turn_pairs(x):
    pairs = x.unflatten(-1, (-1, 2))
    return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)


class PatchRotary(nn.Module):
    def __init__(self, pairs, train_side, side=None, scale="text", theta=10000, top_freq=10):
        super().__init__()
        if scale == "text":
            freqs = 1.0 / (theta ** (torch.arange(0, 2 * pairs, 2)[:pairs].float() / (2 * pairs)))
        elif scale == "pixel":
            freqs = torch.linspace(1.0, top_freq / 2, pairs) * pi
        else:
            raise ValueError(f"unknown frequency scale {scale!r}")
        side = side or train_side
        coords = torch.arange(side) / side * train_side  # patch coordinates on the training grid
        axis = torch.einsum("i,f->if", coords, freqs).repeat_interleave(2, dim=-1)
        angles = grid_angles(axis, axis)
        self.register_buffer("cos_grid", angles.cos())
        self.register_buffer("sin_grid", angles.sin())

    def forward(self, tokens):
        return tokens * self.cos_grid + turn_pairs(tokens) * self.sin_grid


class Patchify(nn.Module):
    def __init__(self, image=224, patch=16, channels=3, width=768):
        super().__init__()
        self.count = (image // patch) ** 2
        self.conv = nn.Conv2d(channels, width, kernel_size=patch, stride=patch)

    def forward(self, images):
        return self.conv(images).flatten(2).transpose(1, 2)
