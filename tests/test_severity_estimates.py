"""The severity the messages quote for rounded frequencies, against torch: the code's own frequency
table (folded from literals and configuration defaults) rounded to bfloat16, at the positions the
code gives, measured against float64."""

from __future__ import annotations

import ast
import math

import pytest

from poslint.analysis import analyze
from poslint.core.source import LineIndex
from poslint.rules.consequences import angle_error, frequency_table, rounded_frequencies

torch = pytest.importorskip("torch")

AXIAL = """
from dataclasses import dataclass
import torch
from torch import nn

@dataclass
class VisionConfig:
    hidden_size: int = 1024
    num_attention_heads: int = 16
    rope_theta: float = 10000.0

class VisionRotary(nn.Module):
    def __init__(self, config: VisionConfig):
        super().__init__()
        spatial_dim = (config.hidden_size // config.num_attention_heads) // 2
        inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, spatial_dim, 2, dtype=torch.float) / spatial_dim))
        self.inv_freq = nn.Buffer(inv_freq, persistent=False)

    def forward(self, x, position_ids):
        freqs = position_ids[..., None].float() * self.inv_freq.to(device=x.device, dtype=torch.float)
        return freqs.cos(), freqs.sin()
"""

TIMING = """
import math
import torch
from torch import nn

class Timing(nn.Module):
    def __init__(self, dim=4096):
        super().__init__()
        inv_freq = torch.exp(-math.log(10000.0) * torch.arange(dim // 2).float() / (dim // 2))
        self.inv_freq = nn.Buffer(inv_freq, persistent=False)

    def forward(self, t):
        emb = t[..., None] * self.inv_freq.to(device=t.device, dtype=t.dtype)
        return torch.cat((emb.cos(), emb.sin()), dim=-1)
"""


def _factor(source):
    facts = analyze(ast.parse(source), source, LineIndex(source))
    (product,) = list(facts.rope_products())
    return product


def _measured(exact64, built32, positions, product_16bit, low=None):
    low = low or torch.bfloat16
    rounded = built32.to(low)
    k = torch.arange(positions)
    if product_16bit:
        angles = k.to(low)[:, None] * rounded[None, :]
    else:
        angles = k.float()[:, None] * rounded.float()[None, :]
    return (angles.double() - k.double()[:, None] * exact64[None, :]).abs().max().item()


def test_the_axial_table_of_a_config_head_dim_is_the_codes_own():
    product = _factor(AXIAL)
    table = frequency_table(product.factor)
    assert table.words == "the code's frequencies: dim 32, base 10000"
    exact64 = 1.0 / 10000.0 ** (torch.arange(0, 32, 2, dtype=torch.float64) / 32)
    built32 = 1.0 / 10000.0 ** (torch.arange(0, 32, 2, dtype=torch.float) / 32)
    for positions in (64, 256, 5604):
        assert angle_error(positions - 1, table, False) == pytest.approx(
            _measured(exact64, built32, positions, False), rel=1e-6)
    # 64 patches per side: 0.011 rad, negligible; the message's 1 rad is where torch puts it.
    assert rounded_frequencies(64, "unknown", product.factor) is None
    assert _measured(exact64, built32, 5603, False) < 1 <= _measured(exact64, built32, 5604, False)


def test_a_16bit_product_of_a_small_count_rounds_as_torch_does():
    product = _factor(TIMING)
    table = frequency_table(product.factor)
    assert table.words == "the code's frequencies: dim 4096, base 10000"
    exact64 = torch.exp(-math.log(10000.0) * torch.arange(2048, dtype=torch.float64) / 2048)
    built32 = torch.exp(-math.log(10000.0) * torch.arange(2048).float() / 2048)
    for count in (7, 13, 128):
        assert angle_error(count - 1, table, True) == pytest.approx(
            _measured(exact64, built32, count, True), rel=1e-6)
    # Past what is enumerated, a bound within 20% of torch's.
    measured = _measured(exact64, built32, 300, True)
    assert measured <= angle_error(299, table, True) <= 1.2 * measured
    # A delay of 6 tokens: 0.023 rad, not reported; 12 tokens: 0.045 rad, reported.
    assert rounded_frequencies(7, "unknown", product.factor, product_16bit=True) is None
    assert "0.045 rad at position 12" in rounded_frequencies(13, "unknown", product.factor, product_16bit=True)


def test_frequencies_cast_to_float16_are_estimated_with_float16s_bits():
    source = """
import torch
def tables(positions, dim=128, base=1e6):
    kept = (1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))).half()
    angles = torch.outer(positions.float(), kept.float())
    return angles.cos(), angles.sin()
"""
    product = _factor(source)
    exact64 = 1.0 / 1e6 ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    built32 = 1.0 / 1e6 ** (torch.arange(0, 128, 2, dtype=torch.float) / 128)
    measured = _measured(exact64, built32, 8192, False, low=torch.float16)
    assert angle_error(8191, frequency_table(product.factor), False, float16=True) == pytest.approx(measured, rel=1e-6)
    words = rounded_frequencies(None, "unknown", product.factor, float16=True)
    assert f"reaches {measured:.2g} rad at position 8191" in words and words.endswith("; float16)")


NORMALISED_GRID = """
import torch
from torch import nn


class Rope2D(nn.Module):
    def __init__(self, dim, pt_seq_len=16, ft_seq_len=None, theta=10000):
        super().__init__()
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
        if ft_seq_len is None:
            ft_seq_len = pt_seq_len
        t = torch.arange(ft_seq_len) / ft_seq_len * pt_seq_len
        freqs = torch.einsum("..., f -> ... f", t, freqs)
        self.register_buffer("freqs_cos", freqs.cos())

    def forward(self, x):
        return x * self.freqs_cos


torch.set_default_dtype(torch.bfloat16)
model = Rope2D(64, ft_seq_len={grid_size})
"""


@pytest.mark.parametrize("grid_size", [24, 37, 64])
def test_a_normalised_grid_scaled_by_a_power_of_two_moves_by_half_a_step_below_it(grid_size):
    """``arange(n) / n * 16`` stays below 16, where bfloat16's steps are 1/16 wide: each value
    moves by at most 1/32, which the message says, and torch agrees."""
    from poslint.engine.checker import check_text
    from poslint.rules import all_rules

    source = NORMALISED_GRID.format(grid_size=grid_size)
    found = [d.message for d in check_text(source, "grid.py", frozenset(all_rules())).diagnostics if d.code == "POS101"]
    assert found and found[0].endswith("they move by up to 0.031"), found
    exact = torch.arange(grid_size, dtype=torch.float64) / grid_size * 16
    moved = (exact.to(torch.bfloat16).double() - exact).abs().max().item()
    assert moved <= 1 / 32


def test_an_autocast_product_of_random_frequencies_moves_each_angle_by_three_roundings():
    """POS103's bound for an input of unknown range times random frequencies: autocast rounds both
    operands and the product, up to (1 + 2**-8)**3 - 1 = 1.2% of each angle; one rounding's 0.4%
    is passed."""
    from poslint.rules.consequences import random_frequencies

    torch.manual_seed(0)
    inputs, frequencies = torch.rand(4096, 1) * 20, torch.randn(1, 256) * 3
    with torch.autocast("cpu", dtype=torch.bfloat16):
        angles = inputs @ frequencies
    exact = inputs.double() @ frequencies.double()
    relative = ((angles.double() - exact).abs() / exact.abs().clamp_min(1e-3)).max().item()
    assert 2.0 ** -8 < relative <= (1 + 2.0 ** -8) ** 3 - 1
    assert "up to 1.2% of itself (0.24 rad at 20 rad)" in random_frequencies(product_too=True)
