import torch
from torch import nn


class FilledRotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv = 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim)

    def forward(self, x):
        n = x.shape[-2]
        steps = torch.arange(n, dtype=x.dtype)
        table = torch.empty(n, self.inv.shape[0], dtype=x.dtype)
        table[:] = torch.outer(steps, self.inv.to(x.dtype))
        return table.cos(), table.sin()
