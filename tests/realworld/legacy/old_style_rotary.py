# -*- coding: utf-8 -*-
"""Older code style: explicit super() arguments, %-formatting, type comments, a mutable default
argument used as a cache, and __future__ imports kept from Python 2 days."""
from __future__ import absolute_import, division, print_function

import math

import torch
import torch.nn as nn


class LegacyRotary(nn.Module):

    def __init__(self, dim, base=10000, precision=torch.half):
        # type: (int, int, torch.dtype) -> None
        super(LegacyRotary, self).__init__()
        self.register_buffer('inv_freq', 1. / (base ** (torch.arange(0, dim, 2).float() / dim)))
        self.length = None
        self.cos = self.sin = None
        self.precision = precision

    def forward(self, x, seq_axis=1, length=None):
        length = x.shape[seq_axis] if length is None else length
        if length != self.length:
            self.length = length
            t = torch.arange(x.shape[seq_axis], device=x.device).type_as(self.inv_freq)
            angles = torch.einsum('i,j->ij', t, self.inv_freq)
            angles = torch.cat((angles, angles), dim=-1).to(x.device)
            if self.precision == torch.bfloat16:
                angles = angles.float()
            # layout: [time, 1, dim]
            self.cos, self.sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
            if self.precision == torch.bfloat16:
                self.cos, self.sin = self.cos.bfloat16(), self.sin.bfloat16()
        return self.cos[:length], self.sin[:length]

    def extra_repr(self):
        return 'dim=%d, precision=%s' % (2 * self.inv_freq.numel(), self.precision)


def absolute_table(positions, width, pad=None, _memo={}):
    """The fixed sine/cosine table of absolute positions (not rotary), memoised."""
    key = (positions, width, pad)
    if key not in _memo:
        def angle(pos, i):
            return pos / math.pow(10000, 2 * (i // 2) / width)

        table = torch.tensor([[angle(p, i) for i in range(width)] for p in range(positions)])
        table[:, 0::2], table[:, 1::2] = table[:, 0::2].sin(), table[:, 1::2].cos()
        if pad is not None:
            table[pad] = 0.
        _memo[key] = table.float()
    return _memo[key]
