"""Indented with tabs, as some editors do."""
import torch
from torch import nn


class TabRotary(nn.Module):
	def __init__(self, dim, base=10000):
		super().__init__()
		inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
		self.register_buffer("inv_freq", inv_freq)

	def forward(self, x, seq_len):
		t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
		if seq_len > 0:
			freqs = torch.einsum("i,j->ij", t, self.inv_freq)
		else:
			freqs = t[:, None] * self.inv_freq
		emb = torch.cat((freqs, freqs), dim=-1)
		return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
