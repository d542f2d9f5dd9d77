"""Newer HF Llama rotary embedding without the autocast guard.

The angle product `inv_freq_expanded @ position_ids_expanded` is a matmul, which autocast runs
in bf16 on both CPU and CUDA. The inputs are float32, so only autocast makes it wrong.
"""

import torch
from torch import nn


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def poslint_factory(seq_len: int = 8192):
    module = LlamaRotaryEmbedding(64)

    def make_inputs(dtype):
        return (torch.zeros(1, seq_len, 8, dtype=dtype), torch.arange(seq_len)[None, :])

    return module, make_inputs, {"kind": "rotary", "position_axis": -2}
