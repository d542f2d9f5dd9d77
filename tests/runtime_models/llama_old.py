"""Old HF Llama rotary embedding (transformers ~4.30): the bf16 position bug.

inv_freq is a registered buffer, so module.to(bf16) rounds it; when the context outgrows the
cache, forward rebuilds it with positions arange(..., dtype=self.inv_freq.dtype), i.e. bf16.
"""

import torch
from torch import nn


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = torch.arange(self.max_seq_len_cached, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :], persistent=False)

    def forward(self, x, seq_len):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return (
            self.cos_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
            self.sin_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
        )


def poslint_factory(seq_len: int = 8192):
    module = LlamaRotaryEmbedding(128)

    def make_inputs(dtype):
        return (torch.zeros(1, 1, seq_len, 8, dtype=dtype), seq_len)

    return module, make_inputs, {"kind": "rotary", "position_axis": -2}
