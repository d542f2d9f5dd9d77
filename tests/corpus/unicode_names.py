# -*- coding: utf-8 -*-
"""Ünïcode docstring: ** not a power **."""
import torch


def ｆreqs(d):
    return 1.0 / (10000 ** (torch.arange(0, d, 2) / d))


def use(n, d):
    return torch.outer(torch.arange(n, dtype=torch.float16), freqs(d))
