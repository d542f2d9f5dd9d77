"""Geometric ALiBi slopes by repeated multiplication: the only powers have literal exponents."""
import torch
from torch import nn

RATIO = 2 ** -1.0


def slopes_for(n_head):
    out, value = [], 1.0
    for _ in range(n_head):
        value *= RATIO
        out.append(value)
    return out


def alibi_mask(tensor, n_head, max_pos):
    slopes = torch.Tensor(slopes_for(n_head))[:, None, None]
    key_positions = torch.arange(max_pos)[None, None, :]
    return (slopes * key_positions).to(tensor)


class AlibiMask(nn.Module):
    def __init__(self, n_head=8):
        super().__init__()
        self.n_head = n_head

    def forward(self, hidden_states):
        return alibi_mask(hidden_states, self.n_head, hidden_states.shape[1])
