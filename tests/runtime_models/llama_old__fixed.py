"""Fixed twin of llama_old.py: angles in float32 everywhere, whatever the module dtype or autocast.

inv_freq is recomputed in float32 at use (a registered buffer would be rounded by module.to(bf16)),
positions are float32, the product runs with autocast disabled; only cos/sin are cast to x.dtype.
"""

import torch
from torch import nn


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000):
        super().__init__()
        self.dim = dim
        self.base = base
        self.max_position_embeddings = max_position_embeddings

    def forward(self, x, seq_len):
        with torch.autocast(device_type=x.device.type, enabled=False):
            exponent = torch.arange(0, self.dim, 2, dtype=torch.int64, device=x.device).float() / self.dim
            inv_freq = 1.0 / (self.base ** exponent)
            t = torch.arange(seq_len, dtype=torch.float32, device=x.device)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def poslint_factory(seq_len: int = 8192):
    module = LlamaRotaryEmbedding(128)

    def make_inputs(dtype):
        return (torch.zeros(1, 1, seq_len, 8, dtype=dtype), seq_len)

    return module, make_inputs, {"kind": "rotary", "position_axis": -2}
