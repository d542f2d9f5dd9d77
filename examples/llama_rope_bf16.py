"""A rotary embedding in the style of Hugging Face's LlamaRotaryEmbedding before 2024.

It has the precision bugs poslint looks for; run ``poslint examples/`` to see them.

* ``inv_freq`` is a registered floating buffer, so ``model.to(torch.bfloat16)`` rounds it to
  bfloat16 for good.
* The cache rebuild builds the positions with ``dtype=self.inv_freq.dtype``: after that
  conversion, the positions themselves are bfloat16, and bfloat16 holds integers exactly only up
  to 256. At 8192 positions, nine in ten positions then share their cos/sin row with a neighbour.
* ``forward`` rebuilds the cache whenever a longer sequence arrives, so the bug is live at
  inference time, not only at construction.
"""

import torch
from torch import nn


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._set_cos_sin_cache(max_position_embeddings, device=self.inv_freq.device,
                                dtype=torch.get_default_dtype())

    def _set_cos_sin_cache(self, seq_len, device, dtype):
        self.max_seq_len_cached = seq_len
        t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(dtype), persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(dtype), persistent=False)

    def forward(self, x, seq_len=None):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len=seq_len, device=x.device, dtype=x.dtype)
        return (
            self.cos_cached[:seq_len].to(dtype=x.dtype),
            self.sin_cached[:seq_len].to(dtype=x.dtype),
        )


def load_for_inference(dim=128):
    """How such a module usually ends up in bfloat16: the whole model is converted after loading."""
    return LlamaRotaryEmbedding(dim).to(torch.bfloat16)
