# Rotary cache whose cos/sin follow the buffer's dtype and are returned uncast; the attention
# block multiplies them into bf16 projections and feeds the result to a bf16 Linear.
import torch
from torch import nn


class TableRotary(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, n):
        steps = torch.arange(n, dtype=self.inv_freq.dtype)
        angles = torch.outer(steps, self.inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos(), angles.sin()
