import ast

from poslint.analysis import Prec, Role
from poslint.analysis.lattice import BF16_EXACT_UP_TO
from poslint.fix.blocks import float32_copy_fix, float32_site_fix, make_float32, module_tensor_name, torch_attr
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import ANGLE_ERROR_AT_8K, grid_extent, rounded_frequencies, when

LOW_FACTOR = (Prec.CONVERTED, Prec.LOW, Prec.ACTIVATION)
# What a frequency formula computed: an inverse power or exponential, or the power before it is inverted.
_FORMULA_ROLES = frozenset({Role.FREQS, Role.GROWTH, Role.GROWTH2})


class LowPrecisionFrequencies(Rule):
    """
    ## What it does
    Finds RoPE frequencies that enter the angle product (positions times frequencies: the
    angles that cos and sin are taken of) in 16 bits: an `inv_freq` held in a registered
    buffer or `nn.Parameter` (which `model.to(torch.bfloat16)` converts) and used unconverted,
    that is as it is read from the buffer, without an upcast such as `.float()`, or frequencies
    cast to 16 bits (`.half()`, `.to(x.dtype)`) before the product. It reports the place where
    they are consumed. Frequencies cast to 16 bits and upcast again before the product
    (`inv_freq.half()` kept, then `.float()` at use) are reported at the cast: the upcast restores
    nothing. A buffer the module stores in 16 bits at construction (`register_buffer("inv_freq",
    inv_freq.to(dtype))` with a `dtype=torch.half` default, or `.bfloat16()`) is 16-bit whether or
    not the model is converted: the message names the stored dtype and counts in its bits, an
    upcast at the read restores nothing, and there is no fix (the stored dtype may be a
    checkpoint's). Integer positions multiplied by a converted buffer take its 16-bit dtype
    (type promotion), so the message says the product rounds them too; the fix (a float32 copy of
    the buffer) makes the product float32. flash-attention's rotary module built with `pos_idx_in_fp32=False` multiplies
    its converted `inv_freq` buffer as it is: reported where the module is called in forward. A
    converted buffer upcast at use is POS106's. A converted buffer of frequencies handed
    in forward to code that poslint cannot read (a compiled rotary kernel: `ext.rotary(self.inv_freq,
    positions, q, k)`) is reported at the argument: whatever the kernel computes, it gets rounded
    frequencies. A buffer of a module that the project converts to float32 after construction, or
    of a part of one (`self.decoder.to(device, dtype=torch.float32)` in a loader or a post-load
    hook), is not reported: the project runs that module in float32; nor is one of a module that
    only plain Python objects inside models hold (no registered part of them). A cast of whole numbers below 257
    (harmonic orders `torch.arange(1, 5, dtype=x.dtype)`, NaN flags built from `torch.isnan`) is
    not reported: bfloat16 holds them exactly, so the cast rounds nothing. Neither are octave
    bands, powers of two of whole exponents (`2.0 ** torch.arange(n)`, `2 ** torch.linspace(0, n - 1,
    steps=n)`, which steps by one), converted or cast: every 16-bit dtype holds them exactly (float16
    up to 2**15); times pi they are rounded like any other table. Octave bands that the code makes
    past 2**15 (`2.0 ** torch.arange(48)`) are reported: a float16 conversion (`model.half()`)
    turns them into inf, and cos/sin of their angles into NaN.

    Where the code gives the range (a literal grid, a configuration class's default such as
    `max_position_embeddings` or `image_size // patch_size`, a count bounded by an `assert`
    (`assert seq_len <= self.text_max_seq_len`), a count such as `torch.full((1,),
    config.num_delay_tokens)`, positions normalised by their total: `counts / counts.sum()`, within
    [-1, 1]), the message computes the angle error at the last position, and a
    range short enough that the rounded frequencies move its angles by less than 0.03 rad is not
    reported. The estimate uses the code's own frequency table where its dim and base are literals
    or configuration defaults (`1 / base ** (arange(0, dim, 2) / dim)`, `exp(arange(0, dim, 2) *
    -c)`), and says so ("the code's frequencies: dim 32, base 10000"); otherwise it assumes head
    dim 128 and base 10000; frequencies drawn at random (`nn.Parameter(torch.randn(n))`, learned
    Fourier features of a noise level) fix no table, and the message gives what 16 bits do to
    each angle instead: 0.4% of it in bfloat16. So do harmonics: a grid laid out along the axis that
    cos and sin are concatenated along (one of several, not the first; an elementwise product)
    indexes the channels, so it
    holds the frequencies, whole multiples of one (`(2 * pi * orders[None, :, None, None]).to(x.dtype)`
    times a time of day, `cat([cos, sin], dim=1)`), and what it multiplies is the positions. So do
    wavelengths held by the module that divide an input of unknown range (a mass over a geometric
    table, `cat([sin(x / w1), cos(x / w2)])`: each channel's angle, the halves one encoding), and
    Fourier bands above one whose table the code does not fix (`pi * linspace(1, res / 2, n)`), and
    a fixed table of bands of a radian or more per unit (`arange(1, 4) * pi`) times an input of
    unknown range (an ODE's time): integer positions would turn by a radian a step, so the input
    is continuous, and the message gives each angle's relative error. Where
    the product itself runs in 16 bits (integer or 16-bit positions times 16-bit frequencies), its
    rounding is counted too. A cast to float16
    (`.half()`, `torch.float16`) is estimated with float16's 11 significant bits, and the message
    says so. Where the positions are an input of a range the code does not give (`position_ids`
    handed in, a diffusion time), the message assumes values up to 8191 and says so ("at an input
    of 8191 ... the code does not give the range of its input, positions or times"): a time in
    [0, 1] moves by far less. Angles that every way to cos/sin multiplies by a literal below one (a slow
    modulation, `sin(angles * 0.01)`) move by that share of the error, which the message says;
    under 0.03 rad nothing is reported.

    ## Why is this bad?
    `module.to(dtype)` converts every floating buffer and parameter, persistent or not. A
    bfloat16 `inv_freq` carries 8 significant bits: at position 8191 the angle error reaches
    pi, and the positions collide (measured against float64 with dim 128 and base 10000; see
    [docs/precision.md](../precision.md) for how 16-bit floats round positions and what module
    conversions do to buffers).

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
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    Recompute the frequencies in float32 where they are used, from the values that built them,
    or keep a float32 copy where `module.to()` cannot reach it (a plain attribute), moved to the
    input's device at use:

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
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Fix safety
    For a buffer, the fix keeps the float32 frequencies where the cast cannot reach them:
    right after each `register_buffer("inv_freq", ...)` it registers a non-persistent integer
    buffer that views the same float32 bits,
    `self.register_buffer("_inv_freq_bits", self.inv_freq.float().view(torch.int32), persistent=False)`,
    and the forward path reads `self._inv_freq_bits.view(torch.float32)`. `module.to(dtype)`
    converts only floating buffers, but moves every buffer between devices, so the device is
    handled with no per-call copy. Where the product was computed in the buffer's dtype (integer
    positions times the converted buffer) and its cos/sin are not cast afterwards, the fix casts
    them back to that dtype (`emb.cos().to(self.inv_freq.dtype)`; the converted buffer stays), so the
    model hands out the dtypes it did; where those cos/sin are taken in another function (the
    angles are returned), there is no fix. This is the smallest correct diff: recomputing in forward
    needs the construction values (`base`, `dim`, scaling), which are often not kept, and a
    plain attribute would not follow `model.to(device)`. `state_dict()` is unchanged, but the
    module gains a buffer in `buffers()`, which callers can observe: the fix is unsafe. A frozen
    `nn.Parameter(..., requires_grad=False)` is handled the same way; a trainable one has no
    fix, and neither has a buffer that the forward path reassigns (`self.inv_freq =
    self.inv_freq.to(x.device)` under a device check: the reads after it see the rounded buffer
    whenever the check is false), nor has a matrix product (`@`, `matmul`, `mm`, `bmm`) whose positions
    may be 16-bit too (`position_ids.to(self.inv_freq.dtype) @ ...`): those products need one dtype,
    so float32 frequencies beside them would raise. Nor is a matrix product of a converted buffer
    with float32 or integer positions reported, nor a linear layer's converted weight times float32
    coordinates: after the conversion they raise (neither promotes), and nothing rounds silently;
    under autocast they are POS103's. For a 16-bit cast, the fix casts to float32 instead, on POS101's terms: safe when
    cos/sin are cast afterwards or the positions are float32; otherwise cos/sin are cast back
    to the original dtype (unsafe), or there is no fix; a hard-coded 16-bit cast is always
    unsafe (checkpoints may rely on it). A cast that is upcast again before the product has no
    fix: it may be deliberate (a kernel that takes 16-bit tables), and removing it changes float32
    results.
    """

    code = "POS102"
    name = "low-precision-frequencies"
    summary = "RoPE frequencies enter the angle product in 16 bits (converted buffer or 16-bit cast)"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    def forward(self, x):
        t = torch.arange(x.shape[-2], device=x.device).float()
        return torch.outer(t, self.inv_freq.to(x.device)).cos().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))
    def forward(self, x):
        t = torch.arange(x.shape[-2], device=x.device).float()
        return torch.outer(t, self.inv_freq).cos().to(x.dtype)
""",
    ]

    def check(self, facts):
        for product in facts.rope_products():
            factor = product.factor
            if factor.prec.is_float32_or_better and factor.rounded is not None and \
                    not _rounded_nothing(factor, factor.rounded) and \
                    factor.rounded.prec in LOW_FACTOR and factor.rounded.prec is not Prec.CONVERTED:
                yield from _cast_then_upcast(facts, product, factor.rounded)  # (a converted buffer: POS106)
                continue
            if factor.prec not in LOW_FACTOR or factor.origin is None or _rounded_nothing(factor, factor.origin):
                continue
            extent, assumed = grid_extent(facts, product)
            consequence = rounded_frequencies(extent, ANGLE_ERROR_AT_8K, factor,
                                              product_16bit=product.result.prec.may_be_16bit,
                                              divisor=product.op == "/", float16=factor.origin.float16,
                                              scale=facts.trig_scale(product),
                                              over_input=not product.positions.roles,
                                              magnitude=product.positions.magnitude)
            if consequence is None:
                continue  # a grid this short turns rounded frequencies into a negligible angle error
            consequence += assumed
            if factor.prec is Prec.CONVERTED and product.one_dtype and (
                    product.positions.prec.is_float32_or_better
                    or product.positions.prec is Prec.INT and product.positions.is_tensor):
                # after the conversion this product raises (float32 or int64 beside bfloat16: a matrix
                # product or a linear layer promotes nothing): nothing rounds silently
                continue
            if factor.prec is Prec.CONVERTED:
                # (integer positions take the frequencies' dtype in the product: they are rounded too)
                promoted = " and the integer positions the product promotes to their dtype" \
                    if product.positions.prec is Prec.INT and product.positions.is_tensor \
                    and (extent is None or extent > BF16_EXACT_UP_TO + 1) else ""
                rounds = "" if factor.dyadic else f"model.to(torch.bfloat16) rounds them{promoted}, and "
                message = (f"frequencies from {factor.origin.reason} enter the angle product unconverted; "
                           f"{rounds}{consequence}")
                fix = None if product.one_dtype and product.positions.prec.may_be_16bit else \
                    float32_copy_fix(facts, module_tensor_name(factor.origin.reason),
                                     facts.reading_class(factor.origin.node))
                yield Finding(product.factor_node, message, fix)
            elif factor.origin.stored:
                # No fix at the read: an upcast there restores nothing, and the stored dtype may be a checkpoint's.
                yield Finding(factor.origin.node, f"frequencies from {factor.origin.reason} enter "
                                                  f"the angle product; {consequence}")
            else:
                made = "made in" if _made_in_dtype(factor.origin.node) else "cast to"
                message = (f"frequencies are {made} {factor.origin.reason} before the angle product; "
                           f"{when(factor.prec)}{consequence}")
                fix = float32_site_fix(facts, product, factor.origin.node, make_float32(facts, factor.origin.node),
                                       product.positions, "cast the frequencies to float32",
                                       torch_attr(facts, "float32")[1])
                yield Finding(factor.origin.node, message, fix)
        for handoff in facts.handoffs:
            # No fix: float32 frequencies would reach a kernel that may take only the module's dtype.
            consequence = rounded_frequencies(None, ANGLE_ERROR_AT_8K, handoff.value)
            if consequence is not None:
                yield Finding(handoff.node, f"frequencies from {handoff.value.origin.reason} are handed unconverted "
                                            f"to {handoff.callee}, code that poslint cannot read; "
                                            f"model.to(torch.bfloat16) rounds them, and {consequence}")


def _made_in_dtype(node) -> bool:
    """Whether ``node`` makes a tensor in the dtype it is given (``arange(..., dtype=x.dtype)``),
    rather than casting one (``.to(x.dtype)``, ``.half()``)."""
    if not isinstance(node, ast.Call) or not any(k.arg == "dtype" for k in node.keywords):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name not in ("to", "type", "type_as", "cast")


def _rounded_nothing(factor, origin) -> bool:
    """Whether the 16 bits decided at ``origin`` rounded nothing of ``factor``: small whole numbers
    (NaN flags, harmonic orders) were cast there, and no frequency formula computed on them in 16
    bits since (``1 / base ** (arange(64, dtype=x.dtype) / 64)`` rounds at the division and the power)."""
    return origin.exact and not factor.roles & _FORMULA_ROLES


def _cast_then_upcast(facts, product, rounded):
    """Frequencies cast to 16 bits and upcast again before the product: the upcast restores
    nothing. No fix: the cast may be deliberate (kernels that take 16-bit tables), and removing it
    changes float32 results."""
    extent, assumed = grid_extent(facts, product)
    consequence = rounded_frequencies(extent, ANGLE_ERROR_AT_8K, product.factor,
                                      product_16bit=product.result.prec.may_be_16bit, divisor=product.op == "/",
                                      float16=rounded.float16, scale=facts.trig_scale(product))
    if consequence is not None:
        rounding = f"from {rounded.reason} are upcast" if rounded.stored else \
            f"are cast to {rounded.reason} and upcast again"
        yield Finding(rounded.node, f"frequencies {rounding} before the angle product, which restores nothing; "
                                    f"{when(rounded.prec)}{consequence}{assumed}")
