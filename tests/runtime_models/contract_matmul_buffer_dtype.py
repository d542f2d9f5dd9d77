# A rotary whose forward casts the position ids to its inv_freq buffer's dtype, multiplies with
# `@` (which needs one dtype on both sides) and returns the angles for another module to rotate
# with. Float32 frequencies beside positions in the converted buffer's dtype would raise in a
# bf16 model, and float32 positions would change the returned table's dtype: no fix applies.
import torch
from torch import nn


class ReturnedAngles(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, position_ids):
        positions = position_ids[:, None, :].to(self.inv_freq.dtype)
        frequencies = self.inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        angles = (frequencies @ positions).transpose(1, 2)
        return torch.cat((angles, angles), dim=-1)
