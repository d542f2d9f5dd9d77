"""Semantics-preserving rewrites change no finding: splitting an expression into temporaries,
extracting or inlining a helper, aliasing imports. Lines move, so the findings are compared as
the multiset of their codes (and each variant must have some, so the test can fail)."""

from __future__ import annotations

import textwrap

import pytest

from poslint.engine.linter import LintOptions, lint_bytes
from poslint.rules import all_rules


def codes(source: str):
    source = textwrap.dedent(source)
    result, _, _ = lint_bytes(source.encode("utf-8"), "rewrite.py", LintOptions(codes=frozenset(all_rules())))
    assert not result.internal_errors, result.internal_errors
    return sorted(d.code for d in result.diagnostics)


ROTARY_2023 = {
    "original": """
        import torch
        class Rotary(torch.nn.Module):
            def __init__(self, dim, base=10000):
                super().__init__()
                self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))
            def forward(self, x, seq_len):
                t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
                freqs = torch.einsum("i,j->ij", t, self.inv_freq)
                emb = torch.cat((freqs, freqs), dim=-1)
                return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    """,
    "temporaries": """
        import torch
        class Rotary(torch.nn.Module):
            def __init__(self, dim, base=10000):
                super().__init__()
                half = torch.arange(0, dim, 2).float()
                exponent = half / dim
                growth = base ** exponent
                frequencies = 1.0 / growth
                self.register_buffer("inv_freq", frequencies)
            def forward(self, x, seq_len):
                table = self.inv_freq
                kind = table.dtype
                t = torch.arange(seq_len, device=x.device, dtype=kind)
                freqs = torch.einsum("i,j->ij", t, table)
                emb = torch.cat((freqs, freqs), dim=-1)
                cos = emb.cos()
                sin = emb.sin()
                return cos.to(x.dtype), sin.to(x.dtype)
    """,
    "extracted helpers": """
        import torch
        def frequencies(dim, base):
            return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        def angles(steps, table):
            return torch.einsum("i,j->ij", steps, table)
        class Rotary(torch.nn.Module):
            def __init__(self, dim, base=10000):
                super().__init__()
                self.register_buffer("inv_freq", frequencies(dim, base))
            def steps(self, n, device):
                return torch.arange(n, device=device, dtype=self.inv_freq.dtype)
            def forward(self, x, seq_len):
                freqs = angles(self.steps(seq_len, x.device), self.inv_freq)
                emb = torch.cat((freqs, freqs), dim=-1)
                return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    """,
    "aliased imports": """
        import torch as T
        from torch import einsum, nn
        class Rotary(nn.Module):
            def __init__(self, dim, base=10000):
                super().__init__()
                self.register_buffer("inv_freq", 1.0 / (base ** (T.arange(0, dim, 2).float() / dim)))
            def forward(self, x, seq_len):
                t = T.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
                freqs = einsum("i,j->ij", t, self.inv_freq)
                emb = T.cat((freqs, freqs), dim=-1)
                return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    """,
}

BUFFER_OBJECT = {
    "original": """
        import torch
        from torch import nn
        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.inv_freq = nn.Buffer(1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)
            def forward(self, x, steps):
                angles = steps[..., None].float() * self.inv_freq.to(device=x.device, dtype=torch.float)
                both = torch.cat((angles, angles), dim=-1)
                return both.cos().to(x.dtype), both.sin().to(x.dtype)
    """,
    "setattr and getattr": """
        import torch
        from torch import nn
        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                setattr(self, "inv_freq", nn.Buffer(1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)),
                                                    persistent=False))
            def forward(self, x, steps):
                table = getattr(self, "inv_freq")
                angles = steps[..., None].float() * table.to(device=x.device, dtype=torch.float)
                both = torch.cat((angles, angles), dim=-1)
                return both.cos().to(x.dtype), both.sin().to(x.dtype)
    """,
    "inlined": """
        import torch
        from torch import nn
        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)),
                                     persistent=False)
            def forward(self, x, steps):
                both = torch.cat([steps[..., None].float() * self.inv_freq.to(device=x.device, dtype=torch.float)] * 2,
                                 dim=-1)
                return both.cos().to(x.dtype), both.sin().to(x.dtype)
    """,
}

ALIBI = {
    "original": """
        import math
        import torch
        def build(mask, heads, dtype):
            base = torch.tensor(2 ** (-(2 ** -(math.log2(heads) - 3))), dtype=torch.float32)
            slopes = torch.pow(base, torch.arange(1, 1 + heads, dtype=torch.int32))
            positions = ((mask.cumsum(dim=-1) - 1) * mask)[:, None, :]
            return (slopes[..., None] * positions).to(dtype)
        class Attention(torch.nn.Module):
            def forward(self, hidden, mask):
                return build(mask, 8, hidden.dtype)
    """,
    "helpers": """
        import math
        import torch
        def ratio(heads):
            return 2 ** (-(2 ** -(math.log2(heads) - 3)))
        def head_slopes(heads):
            return torch.pow(torch.tensor(ratio(heads), dtype=torch.float32), torch.arange(1, 1 + heads))
        def key_positions(mask):
            return ((mask.cumsum(dim=-1) - 1) * mask)[:, None, :]
        def build(mask, heads, dtype):
            bias = head_slopes(heads)[..., None] * key_positions(mask)
            return bias.to(dtype)
        class Attention(torch.nn.Module):
            def forward(self, hidden, mask):
                return build(mask, 8, hidden.dtype)
    """,
}


@pytest.mark.parametrize("family", [ROTARY_2023, BUFFER_OBJECT, ALIBI], ids=["rotary-2023", "nn.Buffer", "alibi"])
def test_rewrites_keep_the_findings(family):
    expected = codes(family["original"])
    assert expected, "the original must have findings"
    for name, variant in family.items():
        assert codes(variant) == expected, name
