"""A Bloom-style model: ALiBi built by a function whose dtype comes from the caller."""
import math

import torch
from torch import nn


def build_alibi_tensor(attention_mask: torch.Tensor, num_heads: int, dtype: torch.dtype) -> torch.Tensor:
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(
        2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), device=attention_mask.device, dtype=torch.float32
    )
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


class BloomLikeModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config.n_head
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)

    def build_alibi_tensor(self, attention_mask, num_heads, dtype):
        return build_alibi_tensor(attention_mask, num_heads, dtype)

    def forward(self, input_ids, attention_mask, **kwargs):
        hidden_states = self.word_embeddings(input_ids)
        alibi = self.build_alibi_tensor(attention_mask, self.num_heads, dtype=hidden_states.dtype)
        return hidden_states, alibi
