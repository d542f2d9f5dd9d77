"""Fixed twin of alibi_bloom.py: the relative form slope * (key - query), cast to the model dtype.

Entries near the diagonal stay small and round to nearly exact values; only distant keys collide.
The bias is for the last query (broadcast form [batch*heads, 1, keys]).
"""

import math

import torch
from torch import nn


def build_alibi_tensor(attention_mask, num_heads, dtype):
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    key_positions = (attention_mask.cumsum(dim=-1) - 1) * attention_mask
    query_position = key_positions[:, -1:]
    distance = (key_positions - query_position)[:, None, :]
    alibi = slopes[..., None] * distance
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


class BloomAlibi(nn.Module):
    def __init__(self, num_heads):
        super().__init__()
        self.num_heads = num_heads

    def forward(self, hidden_states, attention_mask):
        return build_alibi_tensor(attention_mask, self.num_heads, hidden_states.dtype)


def poslint_factory(seq_len: int = 8192):
    module = BloomAlibi(16)

    def make_inputs(dtype):
        return (torch.zeros(1, 1, 8, dtype=dtype), torch.ones(1, seq_len, dtype=torch.int64))

    return module, make_inputs, {"kind": "alibi"}
