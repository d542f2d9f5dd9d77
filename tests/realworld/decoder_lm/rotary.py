"""Rotary embeddings for the decoder, with a cos/sin table that grows on demand.

Three variants share one base class: plain, position interpolation (positions divided by a
factor) and an NTK-style base that stretches once a sequence is longer than the trained one.
The inverse frequencies sit in a registered buffer, and the position ramp copies its dtype.
"""

import math
from typing import Optional, Tuple

import torch
import torch.nn as nn


class RotaryTable(nn.Module):
    """Keeps cos/sin for positions 0..capacity-1 and rebuilds them for longer inputs."""

    def __init__(self, head_dim: int, capacity: int = 2048, theta: float = 10000.0,
                 device: Optional[torch.device] = None):
        super().__init__()
        self.head_dim = head_dim
        self.trained_length = capacity
        self.theta = theta
        exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float().to(device) / head_dim
        self.register_buffer("inv_freq", 1.0 / (theta ** exponents), persistent=False)
        self.capacity = 0
        self._rebuild(capacity, self.inv_freq.device, torch.get_default_dtype())

    def _ramp(self, length: int, device) -> torch.Tensor:
        return torch.arange(length, device=device, dtype=self.inv_freq.dtype)

    def _rebuild(self, length: int, device, dtype) -> None:
        self.capacity = length
        ramp = self._ramp(length, device)
        angles = torch.outer(ramp, self.inv_freq)
        doubled = torch.cat([angles, angles], dim=-1)  # both halves of the head rotate together
        self.register_buffer("cos_table", doubled.cos().to(dtype), persistent=False)
        self.register_buffer("sin_table", doubled.sin().to(dtype), persistent=False)

    def forward(self, states: torch.Tensor, length: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        if length is not None and length > self.capacity:
            self._rebuild(length, states.device, states.dtype)
        return self.cos_table[:length].to(states.dtype), self.sin_table[:length].to(states.dtype)


class InterpolatedRotaryTable(RotaryTable):
    """Squeezes a longer context into the trained range by scaling the positions down."""

    def __init__(self, head_dim, capacity=2048, theta=10000.0, device=None, factor=1.0):
        self.factor = factor
        super().__init__(head_dim, capacity, theta, device)

    def _ramp(self, length, device):
        ramp = torch.arange(length, device=device, dtype=self.inv_freq.dtype)
        return ramp / self.factor


class StretchedBaseRotaryTable(RotaryTable):
    """Raises the base with the length, so the low frequencies still fit a longer context."""

    def __init__(self, head_dim, capacity=2048, theta=10000.0, device=None, factor=1.0):
        self.factor = factor
        super().__init__(head_dim, capacity, theta, device)

    def _rebuild(self, length, device, dtype):
        self.capacity = length
        if length > self.trained_length:
            growth = self.factor * length / self.trained_length - (self.factor - 1)
            theta = self.theta * growth ** (self.head_dim / (self.head_dim - 2))
            exponents = torch.arange(0, self.head_dim, 2).float().to(device) / self.head_dim
            self.register_buffer("inv_freq", 1.0 / theta ** exponents, persistent=False)
        ramp = torch.arange(length, device=device, dtype=self.inv_freq.dtype)
        angles = torch.einsum("p,f->pf", ramp, self.inv_freq)
        doubled = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos_table", doubled.cos().to(dtype), persistent=False)
        self.register_buffer("sin_table", doubled.sin().to(dtype), persistent=False)


def rotations_to_dim(rotations: float, head_dim: int, theta: float, trained_length: int) -> float:
    """The dimension whose wavelength fits ``rotations`` turns into the trained length."""
    wavelength = trained_length / (rotations * 2 * math.pi)
    return head_dim * math.log(wavelength) / (2 * math.log(theta))


def ramp_between(low: float, high: float, size: int) -> torch.Tensor:
    """0 below ``low``, 1 above ``high``, linear in between, over ``size`` dimensions."""
    span = max(high - low, 1e-3)
    return ((torch.arange(size, dtype=torch.float32) - low) / span).clamp(0.0, 1.0)


def swap_halves(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat([second.neg(), first], dim=-1)


def rotate(query, key, cos, sin, positions, head_axis=1):
    cos = cos[positions].unsqueeze(head_axis)
    sin = sin[positions].unsqueeze(head_axis)
    return query * cos + swap_halves(query) * sin, key * cos + swap_halves(key) * sin
