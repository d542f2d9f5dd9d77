import ast

from poslint.analysis import Prec, Role
from poslint.analysis.facts import node_key
from poslint.core.diagnostics import Edit, Fix
from poslint.fix.blocks import atom, insert_after, keyword, replace, torch_attr
from poslint.rules.base import Finding, Rule

# float32 keeps 24 significant bits: p * theta carries an absolute error of about p * 2**-24 rad at
# the highest frequency (theta = 1), measured by scripts/long_context_error.py (docs/precision.md).
FLOAT32_EPS = 2.0**-24
# The reported angle error: 10x poslint verify's angle limit (1e-3 rad, the float32 floor at
# 8192 positions, doubled); float32 reaches it from about 168k positions.
THRESHOLD_RAD = 0.01
EXACT_FLOAT32_INTEGERS = 1 << 24


class LongContextFloat32Angles(Rule):
    """
    ## What it does
    Finds RoPE angle products computed in float32 over a context whose length the code shows:
    an index grid of literal size (`torch.arange(1048576)`), a `max_position_embeddings`,
    `max_seq_len` or similar default that sizes the grid (times a literal rope-scaling factor),
    or a grid indexed by position ids
    (`torch.arange(self.max_position_embeddings)[position_ids]`). It reports when the float32
    angle error at that length passes 0.01 rad, which happens from about 168k positions, and
    says how large the error is. A product with float64 frequencies and float64 (or integer)
    positions is not reported.

    Lengths computed from literals are folded (`int(original_max_position_embeddings * factor)`
    with both defaults in the signature); a length received from a configuration object, or
    only at run time, is not known to the analysis, and is not reported.

    ## Why is this bad?
    float32 keeps 24 significant bits, so the angle `p * theta` carries an absolute error of up to
    about `p * 2**-24` rad, even in code with no 16-bit value anywhere: 0.06 rad at 1M positions,
    0.3 rad at 4M, 0.7 rad at 10M for the highest frequency (measured in docs/precision.md, for
    bases 10k to 1M). Above 2**24 (16.7M) the positions themselves are no longer integers.
    Models that advertise million-token contexts rotate their farthest tokens by visibly wrong
    angles.

    ## Example
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=500000.0, max_position_embeddings=1048576):
            super().__init__()
            self.dim = dim
            self.base = base
            self.max_position_embeddings = max_position_embeddings

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float() / self.dim))
            t = torch.arange(self.max_position_embeddings, device=x.device, dtype=torch.float32)[:seq_len]
            freqs = t[:, None] * inv_freq[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=500000.0, max_position_embeddings=1048576):
            super().__init__()
            self.dim = dim
            self.base = base
            self.max_position_embeddings = max_position_embeddings

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).double() / self.dim))
            t = torch.arange(self.max_position_embeddings, device=x.device, dtype=torch.float64)[:seq_len]
            freqs = t[:, None] * inv_freq[None, :]  # float64 angles: error below 1e-9 rad at 10M
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```
    A table built once (a cos/sin cache) costs float64 only while it is built. Exact range
    reduction in float32 (`p = q*K + r`, `q * ((K*theta) mod 2pi) + r*theta`) was measured as
    well and keeps 3e-4 to 1.4e-3 rad with K = 4096: better than float32, far worse than
    float64 (docs/precision.md), so poslint proposes float64.

    ## Fix safety
    The fix computes the angle product in float64: the positions operand and the frequencies
    operand get `.double()`, and the frequencies' own computation in this file is made float64
    (its `arange` gets `dtype=torch.float64`, its `.float()` becomes `.double()`), since
    frequencies rounded to float32 would keep half of the error. It is offered only when cos/sin
    are cast to an explicit dtype afterwards, so the outputs keep their dtypes, and only when the
    frequencies are computed in this file by an `arange`, and only up to 2**24 positions (beyond,
    the float32 positions are rounded before the product, and upcasting them is too late). It is
    unsafe: a frequencies tensor
    that is stored (a buffer, a parameter) becomes float64, which changes the `state_dict` and
    the memory it takes, and float64 is slow on GPUs where the angles are recomputed on every
    forward.
    """

    code = "POS301"
    name = "long-context-float32-angles"
    summary = "RoPE angles in float32 over a context long enough for float32's own error to pass 0.01 rad"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def rope(x, inv_freq):
    t = torch.arange(32768, device=x.device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq.float())
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
        """
import torch
def rope(x, dim=128, base=500000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    t = torch.arange(1048576, device=x.device, dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
def rope(x, dim=128, base=500000.0, max_seq_len=1048576):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    t = torch.arange(max_seq_len, device=x.device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]

    def check(self, facts):
        for product in facts.rope_products():
            length = product.positions.extent
            if length is None or length * FLOAT32_EPS < THRESHOLD_RAD:
                continue
            positions, freqs = product.positions.prec, product.factor.prec
            if positions.may_be_16bit or freqs.may_be_16bit:
                continue  # 16 bits lose far more: POS101/POS102 report it
            if freqs is Prec.F64 and positions in (Prec.F64, Prec.INT):
                continue
            beyond = (f"; above {EXACT_FLOAT32_INTEGERS:,} the positions themselves are not exact"
                      if length > EXACT_FLOAT32_INTEGERS else "")
            yield Finding(product.node,
                          f"angle product in float32 over {length:,} positions: float32's own error reaches about "
                          f"{length * FLOAT32_EPS:.2g} rad at the highest frequency (more than {THRESHOLD_RAD} rad)"
                          f"{beyond}", _float64_fix(facts, product))


def _float64_fix(facts, product):
    if not facts.cos_sin_cast_after(product):
        return None  # float64 cos/sin would reach the caller
    if product.positions.extent > EXACT_FLOAT32_INTEGERS:
        return None  # the positions may be rounded before the product: .double() there is too late
    # (a growing table inverted into these frequencies is computed inside their creation)
    creations = [c for c in facts.creations if node_key(c.node) in product.factor.products
                 and not (c.value.has(Role.GROWTH) and not c.value.has(Role.FREQS))]
    edits = []
    for creation in creations:
        made = _creation_in_float64(facts, creation.node)
        if not made:
            return None
        edits += made
    if not edits:
        return None
    for operand in (product.positions_node, product.factor_node):
        edits.append(replace(facts, operand, f"{atom(facts, operand)}.double()"))
    edits.sort(key=lambda e: e.start)
    if any(a.end > b.start for a, b in zip(edits, edits[1:])):
        return None  # an operand is the creation itself: one edit would overwrite the other
    return Fix(tuple(edits), "unsafe", "compute the frequencies and the angle product in float64", ())


def _creation_in_float64(facts, node):
    """Edits that make the frequencies expression ``node`` compute in float64: its ``arange``
    calls get ``dtype=torch.float64`` (an integer dtype is kept, for ``.float()`` to convert),
    its ``.float()`` calls become ``.double()``. Empty if it has no ``arange``."""
    float64, _ = torch_attr(facts, "float64")
    edits, aranges = [], 0
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        if facts.names.qualname(sub.func) == "torch.arange":
            aranges += 1
            dtype = keyword(sub, "dtype")
            if dtype is None:
                last = (sub.args + sub.keywords)[-1]
                edits.append(insert_after(facts, last.value if isinstance(last, ast.keyword) else last,
                                          f", dtype={float64}"))
            elif not facts.source(dtype.value).endswith(("int64", "int32", "long", "int")):
                edits.append(replace(facts, dtype.value, float64))
        elif isinstance(sub.func, ast.Attribute) and sub.func.attr == "float" and not sub.args and not sub.keywords:
            start, end = facts.span(sub)
            receiver_end = facts.span(sub.func.value)[1]
            edits.append(Edit(receiver_end, end, ".double()"))
    return edits if aranges else []
