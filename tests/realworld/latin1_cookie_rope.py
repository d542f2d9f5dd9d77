# -*- coding: latin-1 -*-
"""Rotary embedding saved in Latin-1 by an old editor: café, naïve, façade."""
import torch
from torch import nn

AUTEUR = "François Ågård"


class RotaryLatin1(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, x, seq_len):
        # positions « in the buffer's dtype » : bf16 after model.to(torch.bfloat16)
        t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
