"""Bloom-style ALiBi: slope * absolute key position, built in float32 and cast to the model dtype.

Softmax is shift-invariant, so the absolute form is right in exact arithmetic, but its values
grow with position: in bf16 the keys nearest the query collapse onto a few values.
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
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
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
