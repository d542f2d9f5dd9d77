from poslint.analysis import Prec
from poslint.fix.blocks import float32_copy_fix, module_tensor_name
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import ANGLE_ERROR_BY_818, grid_extent, rounded_frequencies


class RoundedFrequencyBuffer(Rule):
    """
    ## What it does
    Finds RoPE frequencies that live in a registered buffer or parameter and are upcast
    (`.float()`) where they are used, as in `self.inv_freq[None, :, None].float()`. Every way a
    module holds a tensor counts: `register_buffer`, `self.inv_freq = nn.Buffer(...)`,
    `nn.Parameter`, and `setattr`/`getattr` with computed names (`f"{kind}_inv_freq"`, one
    rotary table per attention kind). A buffer whose values come from elsewhere (an init
    function in another module) counts when its product with the positions reaches both cos
    and sin. Type promotion upcasts as `.float()` does and restores as little: a buffer that a
    float32 operand widens (`self.inv_freq * self.gain.float()`, a YaRN blend with a float32 ramp)
    counts. Where a path that upcasts the buffer and one that uses it as it is meet at one
    product (`if fp32: f = self.inv_freq.float() else: f = self.inv_freq`), the upcast is
    reported here and the raw use by POS102. A buffer registered again in float32 before the
    read (in forward, by a method called just before) is not the converted one, nor is one that
    an override of `_apply`/`to`/`half` recomputes, nor one of a module that a model of the same
    file lists in `_keep_in_fp32_modules_strict` (loaders keep it float32 in every dtype; the
    non-strict list only for float16 loads), nor one of a module that the project converts to
    float32 after construction, or of a part of one (`self.decoder.to(device, dtype=torch.float32)`
    in a loader; a conversion in `__init__` is undone by a user's later one). The frequencies may
    be read through a `@property`, and scaled in log space (`exp(log(inv_freq.float()) - log(s))`,
    or evolved there by an ODE solver, CLEX's continuous scaling): the rounding stays. A model that holds one of transformers' rotary modules and
    calls it with position ids (`self.rotary(x, position_ids)`, as 4.38 and later take them) is
    reported at that call: the library upcasts its own `inv_freq` buffer inside, after the
    model's conversion rounded it (no fix: the read is the library's). So is a model that reads
    that buffer itself and upcasts it (`self.rotary.inv_freq.float()`), at the read (no fix: the
    buffer is the library module's).

    Where the code gives the range (a literal grid, a configuration class's default such as
    `max_position_embeddings` or `image_size // patch_size`, a count bounded by an `assert`
    (`assert seq_len <= self.text_max_seq_len`), a count such as `torch.full((1,),
    config.num_delay_tokens)`), the message computes the angle error at the last position, and a
    range short enough that the rounded frequencies move its angles by less than 0.03 rad is not
    reported. The estimate uses the code's own frequency table where its dim and base are literals
    or configuration defaults (`1 / base ** (arange(0, dim, 2) / dim)`, `exp(arange(0, dim, 2) *
    -c)`), and says so ("the code's frequencies: dim 32, base 10000"); otherwise it assumes head
    dim 128 and base 10000. With the range unknown and the code's table known, it says
    where the error passes 1 rad for that table.

    ## Why is this bad?
    `model.to(torch.bfloat16)` has already rounded the buffer for good: a bfloat16 value that
    held 1/3 reads back as 0.333984375 after `.float()`. The angles are computed in float32 from
    wrong frequencies, and their error passes 1 rad by position 818 (measured against float64
    with dim 128 and base 10000; see [docs/precision.md](../precision.md) for what module
    conversions do to buffers).
    This is the state of many implementations after the 2024 fixes, which is why it has its own
    code: teams can choose.

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
            freqs = torch.outer(t, self.inv_freq.float())
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Use instead
    Keep the float32 frequencies where `module.to()` cannot reach them (a plain attribute,
    moved to the input's device at use), or recompute them in float32 in forward:

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
    The fix is POS102's: next to the buffer it registers a non-persistent integer buffer that
    views the same float32 bits (`module.to(dtype)` converts only floating buffers), and the
    forward path reads the frequencies from that view. The existing `.float()` is then a no-op.
    `state_dict()` is unchanged; the extra buffer shows in `buffers()`, so the fix is unsafe.
    A buffer that the forward path reassigns (`self.inv_freq = self.inv_freq.to(x.device)`)
    gets no fix, as in POS102.
    """

    code = "POS106"
    name = "rounded-frequency-buffer"
    summary = "RoPE frequencies come from a buffer that module.to() rounds, upcast only at use"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    def forward(self, x, position_ids):
        inv = self.inv_freq.to(x.device)[None, :, None].float()
        with torch.autocast(device_type=x.device.type, enabled=False):
            freqs = inv @ position_ids[:, None, :].float()
        return freqs.cos().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
class Rotary(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)
    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float()
        with torch.autocast(device_type=x.device.type, enabled=False):
            freqs = inv @ position_ids[:, None, :].float()
        return freqs.cos().to(x.dtype)
""",
    ]

    def check(self, facts):
        for product in facts.rope_products():
            rounded = product.factor.rounded
            # Upcast on every path, or on one of two that meet here (the other using the buffer
            # as it is, which POS102 reports at its own read).
            raw = product.factor.origin
            upcast = product.factor.prec.is_float32_or_better or (
                raw is not None and raw.prec is Prec.CONVERTED and rounded is not None and raw.key != rounded.key)
            if rounded is not None and rounded.prec is Prec.CONVERTED and upcast:
                extent, assumed = grid_extent(facts, product)
                consequence = rounded_frequencies(extent, ANGLE_ERROR_BY_818, product.factor,
                                                  product_16bit=product.result.prec.may_be_16bit,
                                                  divisor=product.op == "/", scale=facts.trig_scale(product))
                if consequence is None:
                    continue  # a grid this short turns rounded frequencies into a negligible angle error
                consequence += assumed
                yield Finding(rounded.node,
                              f"frequencies from {rounded.reason} are upcast at use, but model.to(torch.bfloat16) "
                              f"has already rounded them for good; {consequence}",
                              float32_copy_fix(facts, module_tensor_name(rounded.reason),
                                               facts.reading_class(rounded.node)))
