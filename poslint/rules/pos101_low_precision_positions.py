from poslint.analysis import Prec, Role, node_key
from poslint.analysis.lattice import BF16_EXACT_UP_TO, FP16_EXACT_UP_TO
from poslint.fix.blocks import float32_site_fix, make_float32, torch_attr
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import (distinct_positions, drawn_at_random, grid_extent, random_frequencies,
                                       rounded_continuous_positions, unknown_kind, when)


class LowPrecisionPositions(Rule):
    """
    ## What it does
    Finds RoPE position indices that are, or become at run time, bfloat16 or float16 before
    they are multiplied by the frequencies: an `arange`/`linspace` built with a 16-bit dtype,
    with the dtype of a buffer or parameter (`dtype=self.inv_freq.dtype`,
    `.type_as(self.inv_freq)`), with the activation dtype (`.to(x.dtype)`), or in the default
    dtype (`torch.arange(0., n)`, `torch.arange(n) / scale`). flash-attention's `RotaryEmbedding`
    (and SwissArmyTransformer's `FastRotaryEmbedding`) built with `pos_idx_in_fp32=False` makes
    its positions in its `inv_freq` buffer's dtype inside its forward: reported at that argument
    when the module is called in forward (no fix: the edit is the flag, which changes the cache).

    ## Why is this bad?
    bfloat16 holds every integer exactly only up to 256, float16 up to 2048. At 8192 positions
    only 897 distinct values survive in bfloat16: 89% of positions share their encoding with a
    neighbour, so the model cannot tell them apart. A buffer's dtype changes when the model is
    converted with `model.to(torch.bfloat16)`, and loaders set the default dtype to the load
    dtype while they build the model, so code that is float32 in a unit test is 16-bit in
    production. A buffer the module stores in 16 bits at construction (`inv_freq.to(dtype)` with a
    `dtype=torch.half` default) gives its dtype without any conversion: the message names it and
    counts in its bits. FSDP2 casts too: a module whose own method shards it with a
    mixed-precision policy (`fully_shard(self, mp_policy=policy)`) gets each floating argument of
    its forward in the policy's param dtype, so float positions handed to it are reported where
    they are passed (a `.float()` inside the block comes too late). No fix is offered there: pass
    integer positions, make them inside the block, or set `cast_forward_inputs=False`.

    The message assumes 8192 positions unless the code gives the grid's size: a literal
    (`torch.arange(24 * 24)`, a count held by `torch.full((1,), n)`), or the default of the
    configuration class a parameter is annotated with (`config.image_size // config.patch_size`,
    `config.max_position_embeddings`, `config.default_num_delay_tokens`), or a bound the code
    asserts on the count (`assert seq_len <= self.text_max_seq_len`). Then it
    counts that grid's distinct values, and a grid of at most 257 positions, exact in bfloat16,
    is not reported. One axis of an image's grid sized at run time (row and column positions
    whose angles are concatenated, written into alternate channels, or stacked as coordinates) is
    assumed to hold 91 positions, a 91 x 91 grid of 8192 in all, and so is exact: the rows and
    columns of a feature map raise nothing here. Nor does a cast of such a small grid that the
    code scales afterwards (`torch.arange(1, 5, dtype=x.dtype) * math.pi`), or of whole numbers
    below 257 that tests build (NaN flags: `(torch.isnan(x) * -2.0 + torch.isinf(x) * 4.0).to(x.dtype)`,
    a bool tensor is 0 or 1): the cast itself loses nothing. A cast to float16 (`.half()`, `dtype=torch.float16`) is judged by float16's 11 bits:
    a grid of at most 2049 positions is exact there, and the message counts what float16 keeps
    (4097 of 8192); a dtype that is float16 on one path and bfloat16 on another (a precision
    setting) is counted, and named, as bfloat16. Continuous positions whose range the code bounds (`torch.linspace(-1, 1, n)`,
    a running count divided by its total: `counts / counts.sum(-1, keepdim=True)`,
    `(y - 0.5) / (y[:, -1:] + eps)`, and such values times or plus a literal: `1000 * t`,
    `* 2 * math.pi`) are judged by their angles instead: 16 bits move a value by up to half a
    step at its largest magnitude, times the largest frequency (the code's table, else 1, and
    with the literal scalings the angles get on their way to cos/sin: `x * scales * math.pi`), and
    under 0.03 rad nothing is reported. An input of unknown range (a time, a scale) multiplied by
    frequencies drawn at random (learned Fourier features, `nn.Parameter(torch.randn(n))`) is
    reported with what 16 bits do to each angle: 0.4% of it in bfloat16. An input the code builds no
    grid for (an argument: positions, a diffusion time, a scale) is named as such, "the input the
    frequencies multiply", not as positions. Default-dtype findings are made only in
    construction code (where loaders set a 16-bit default) and in code of unknown phase.

    ## Example
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def forward(self, x, seq_len):
            t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            # A plain attribute, which module.to() does not convert: the frequencies stay float32.
            self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))

        def forward(self, x, seq_len):
            inv_freq = self.inv_freq.to(x.device)
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)  # float32 positions
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Fix safety
    The fix makes the positions float32 (`dtype=torch.float32`, `.float()` in place of a 16-bit
    cast, and `.to(device=t.device, dtype=torch.float32)` for `.type_as(t)`, which keeps the
    device move). It keeps float32 values, the device and `state_dict()`, and it keeps the
    dtype that leaves the rotary code: it is safe when cos/sin are cast to an explicit dtype
    afterwards (the usual `.to(x.dtype)`) or the frequencies are float32 (the product was
    float32 already). Otherwise every cos/sin is cast back to the positions' original dtype
    (`.to(self.inv_freq.dtype)`, `.to(dtype)` for a caller's `dtype=`), and angles written into
    a tensor allocated in 16 bits get a float32 allocation; that fix is unsafe, as it assumes
    the frequencies did not widen the original product. When a cos/sin is out of view, or is
    cast to the positions' own dtype (`emb.to(t)`, which would make it float32 too), there is
    no fix; nor when the product is a matrix product or a layer's call whose frequencies may be
    16-bit (a converted weight): float32 positions beside them would raise. Positions hard-coded to 16 bits (`.half()`, `dtype=torch.bfloat16`) change float32
    results when fixed, and checkpoints may have been trained with them: always unsafe.
    """

    code = "POS101"
    name = "low-precision-positions"
    summary = "RoPE positions are, or become at run time, 16-bit before they meet the frequencies"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def rope(x, inv_freq):
    t = torch.arange(x.shape[-2], device=x.device).float()
    angles = torch.outer(t, inv_freq)
    return angles.cos().to(x.dtype), angles.sin().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
def rope(x, inv_freq):
    t = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype)
    angles = torch.outer(t, inv_freq)
    return angles.cos(), angles.sin()
""",
        """
import torch
class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
    def forward(self, x):
        t = torch.arange(x.shape[-2]).type_as(self.inv_freq)
        angles = torch.outer(t, self.inv_freq.float())
        return angles.cos(), angles.sin()
""",
    ]

    def check(self, facts):
        learned = facts.trained_initial_values()
        for product in facts.rope_products():
            magnitude = product.positions.magnitude
            if magnitude is not None:
                yield from _continuous(facts, product, magnitude)
                continue
            extent, _ = grid_extent(facts, product)
            if extent is not None and extent <= BF16_EXACT_UP_TO + 1:
                continue  # a grid this small (literal, or one axis of an image's) is exact in 16 bits
            # Positions known only as what a rotary product multiplies (an input) may be integers
            # or coordinates: the message says what 16 bits do to each.
            # An input times frequencies drawn at random (a time, a scale): each angle moves relatively.
            relative = not product.positions.has(Role.POSITIONS) and drawn_at_random(product.factor)
            consequence = distinct_positions(extent) if product.positions.has(Role.POSITIONS) else \
                random_frequencies() if relative else unknown_kind(extent)
            # An input the code gives no grid for may be positions, a time or a scale: the message says so.
            subject = "positions take" if product.positions.has(Role.POSITIONS) else \
                "the input the frequencies multiply (positions, times or scales) takes"
            for origin in product.positions.precision_losses():
                if origin.exact:
                    continue  # what was rounded there were small integers: nothing was lost
                if origin.prec is Prec.DEFAULT and node_key(product.node) in learned:
                    continue  # angles built into a trained parameter's initial value (a default at construction)
                said = random_frequencies(float16=origin.float16) if relative else consequence
                if origin.float16 and not relative:
                    if extent is not None and extent <= FP16_EXACT_UP_TO + 1:
                        continue  # float16 holds these integers exactly
                    said = distinct_positions(extent, float16=True) if product.positions.has(Role.POSITIONS) \
                        else unknown_kind(extent, float16=True)
                yield Finding(origin.node, f"{subject} {origin.reason}; {when(origin.prec)}{said}",
                              None if origin.entry else positions_fix(facts, product, origin.node))


def _continuous(facts, product, magnitude):
    """Continuous positions the code bounds (``linspace(-1, 1, n)``, a normalised running count,
    diffusion times ``1000 * t``): reported where 16 bits move their angles by 0.03 rad or more."""
    largest_angle = facts.largest_angles.get(node_key(product.node))
    for origin in product.positions.precision_losses():
        said = rounded_continuous_positions(magnitude, product.factor, float16=origin.float16,
                                            largest_angle=largest_angle)
        if said is not None and not origin.exact:
            yield Finding(origin.node, f"positions take {origin.reason}; {when(origin.prec)}{said}",
                          None if origin.entry else positions_fix(facts, product, origin.node))


def positions_fix(facts, product, node):
    """Make the positions float32 and keep the dtype of cos/sin (see the Fix safety section)."""
    if product.one_dtype and product.factor.prec.may_be_16bit:
        return None  # float32 positions beside 16-bit frequencies in a matmul or a layer would raise
    return float32_site_fix(facts, product, node, make_float32(facts, node), product.factor,
                            "compute the positions in float32", torch_attr(facts, "float32")[1])
