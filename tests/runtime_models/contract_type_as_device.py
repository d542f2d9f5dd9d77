import torch
from torch import nn


class MovedRotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, x):
        steps = torch.arange(x.shape[-2]).type_as(self.inv_freq)
        angles = torch.outer(steps, self.inv_freq)
        return angles.cos().to(x.dtype), angles.sin().to(x.dtype)
