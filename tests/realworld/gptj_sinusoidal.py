"""Interleaved rotary embeddings: dimensions (0, 1), (2, 3), ... rotate as pairs, and the
sin/cos table is computed on the fly for each call from integer positions."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def sincos_table(length, pair_count, device=None):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 2 * pair_count, 2) / (2 * pair_count)))
    phase = torch.einsum("t,f->tf", torch.arange(length, dtype=torch.float), inv_freq).to(device).float()
    return phase.sin(), phase.cos()


def pairwise_turn(x):
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


def spread(table, start, length):
    """Repeat every column twice, (a, b) -> (a, a, b, b), and cut the rows that are needed."""
    return table[start:start + length].repeat_interleave(2, dim=-1)[None, :, None, :]


def apply_pairwise(x, table, start=0):
    sin, cos = (spread(t, start, x.shape[1]) for t in table)
    return x * cos + pairwise_turn(x) * sin


class InterleavedRotaryAttention(nn.Module):
    def __init__(self, width=4096, heads=16, rotary_dims=64):
        super().__init__()
        self.heads = heads
        self.head_dim = width // heads
        self.rotary_dims = rotary_dims
        self.q = nn.Linear(width, width, bias=False)
        self.k = nn.Linear(width, width, bias=False)
        self.v = nn.Linear(width, width, bias=False)
        self.o = nn.Linear(width, width, bias=False)

    def forward(self, x, past_length=0):
        b, t, width = x.shape
        q, k, v = (proj(x).view(b, t, self.heads, self.head_dim) for proj in (self.q, self.k, self.v))
        table = sincos_table(past_length + t, self.rotary_dims // 2, device=x.device)
        r = self.rotary_dims
        q = torch.cat([apply_pairwise(q[..., :r], table, past_length), q[..., r:]], dim=-1)
        k = torch.cat([apply_pairwise(k[..., :r], table, past_length), k[..., r:]], dim=-1)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                             is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, t, width))
