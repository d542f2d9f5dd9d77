"""Fixed twin of llama_matmul.py: the angle product runs with autocast disabled, in float32.

inv_freq stays a non-persistent buffer for checkpoint compatibility but is recomputed in float32
at use (module.to(bf16) rounds the buffer), as transformers does since 2024.
"""

import torch
from torch import nn


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.dim = dim
        self.base = base
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        with torch.autocast(device_type=x.device.type, enabled=False):
            exponent = torch.arange(0, self.dim, 2, dtype=torch.int64, device=x.device).float() / self.dim
            inv_freq = 1.0 / (self.base ** exponent)
            inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
            position_ids_expanded = position_ids[:, None, :].float()
            freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def poslint_factory(seq_len: int = 8192):
    module = LlamaRotaryEmbedding(64)

    def make_inputs(dtype):
        return (torch.zeros(1, seq_len, 8, dtype=dtype), torch.arange(seq_len)[None, :])

    return module, make_inputs, {"kind": "rotary", "position_axis": -2}
