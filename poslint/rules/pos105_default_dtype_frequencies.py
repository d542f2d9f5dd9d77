from poslint.analysis import Prec, Role, node_key
from poslint.core.diagnostics import Fix
from poslint.fix.blocks import make_float32, torch_attr
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import ANGLE_ERROR_AT_8K, grid_extent, rounded_frequencies


class DefaultDtypeFrequencies(Rule):
    """
    ## What it does
    Finds RoPE frequencies computed in torch's default dtype, such as
    `1.0 / base ** (torch.arange(0, d, 2) / d)`: an integer `arange` put through a true
    division, or combined with a Python float, takes the default dtype. Tables that grow with
    the channel count too: wavelengths `base ** (torch.arange(0, d, 2) / d)` that the positions
    are divided by, and bands `10.0 ** (torch.arange(d) / (d - 1) * 4.0)` that multiply them (a
    diffusion-step embedding). An untyped base (`base` without a default, `config.rope_theta`)
    is a number, which leaves the exponent's dtype to the result. Not the initial value of an
    `nn.Parameter` that training moves (learned frequencies): training starts from it, or a
    checkpoint replaces it; POS102 and POS106 report the trained parameter's conversion. A table
    in `nn.Parameter(..., requires_grad=False)` keeps its initial value and is reported. Bands of a
    radian or more per unit that multiply an input of unknown range (box coordinates, a time) are
    reported with each angle's relative error, not with integer positions.

    Loaders set a 16-bit default dtype only while they construct the model (`from_pretrained`
    and `from_config` with a 16-bit dtype), so this is reported in construction code (`__init__`,
    `post_init`, `_init_weights`, `init_weights`, `reset_parameters` and what only they reach) and in functions
    whose phase the file does not show. Imports and the forward path run with float32, and are
    reported only when the file itself sets a default dtype (calls `torch.set_default_dtype`,
    `set_default_tensor_type` or a loader's wrapper of them).

    Where the code gives the range (a literal grid, a configuration class's default such as
    `max_position_embeddings` or `image_size // patch_size`, a count bounded by an `assert`
    (`assert seq_len <= self.text_max_seq_len`), a count such as `torch.full((1,),
    config.num_delay_tokens)`), the message computes the angle error at the last position, and a
    range short enough that the rounded frequencies move its angles by less than 0.03 rad is not
    reported. The estimate uses the code's own frequency table where its dim and base are literals
    or configuration defaults (`1 / base ** (arange(0, dim, 2) / dim)`, `exp(arange(0, dim, 2) *
    -c)`), and says so ("the code's frequencies: dim 32, base 10000"); otherwise it assumes head
    dim 128 and base 10000. For the code's table, every step of its computation is
    rounded as a bfloat16 default rounds it (the exponent, the power, the quotient); where integer
    positions meet the table (`position * div_term`, `pos / denom`), the product takes the table's
    dtype and rounds too, which the estimate counts and the message says ("they, and the angle
    product that takes their dtype"): so one frequency of exactly 1 still leaves 1153 of 32768
    positions distinct. Where the
    positions are an input of a range the code does not give (a diffusion time, `position_ids`),
    the message assumes values up to 8191 and says that the range is not in the code.

    ## Why is this bad?
    Model loaders and "bf16-true" training set the default dtype to bfloat16 while they build
    the model. The frequencies are then bfloat16 from the start, with 8 significant bits, and the
    angle error reaches pi within 8192 positions, whatever the code does with them afterwards.

    ## Example
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))

        def forward(self, x, seq_len):
            inv_freq = self.inv_freq.to(x.device)
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
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
            # .float() makes the frequencies float32, whatever the default dtype.
            self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))

        def forward(self, x, seq_len):
            inv_freq = self.inv_freq.to(x.device)
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    ```

    ## Fix safety
    The fix makes the integer operand float32 (`dtype=torch.float32` on the `arange`, or
    `.float()`). Under a float32 default dtype it computes exactly the same values, so it is
    safe.
    """

    code = "POS105"
    name = "default-dtype-frequencies"
    summary = "RoPE frequencies are computed in the default dtype, which loaders set to 16 bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def frequencies(dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return torch.outer(torch.arange(4096).float(), inv_freq).cos()
""",
    ]
    INVALID = [
        """
import torch
def frequencies(dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
    return torch.outer(torch.arange(4096).float(), inv_freq).cos()
""",
    ]

    def check(self, facts):
        # Only frequencies that meet positions: a Fourier-feature scale on inputs is not RoPE.
        extents = {}  # creation key -> the positions' extents of the products it meets
        divides = {}  # creation key -> whether every product it meets divides by it (wavelengths)
        inputs = {}  # creation key -> whether every product it meets takes an input of unknown range
        # creation key -> whether a product it meets runs in its dtype (an integer grid times it, or
        # divided by it): the product rounds too, and moving the frequencies to float32 fixes both
        in_its_dtype = {}
        frequencies = {node_key(c.node) for c in facts.creations if c.value.has(Role.FREQS)}
        learned = facts.trained_initial_values()
        for product in facts.rope_products():
            inverted = product.factor.products & frequencies  # (a growing table inverted into frequencies)
            for key in product.factor.products:
                if inverted and key not in frequencies:
                    continue
                extents.setdefault(key, []).append(grid_extent(facts, product))
                divides[key] = divides.get(key, True) and product.op == "/"
                inputs[key] = inputs.get(key, True) and not product.positions.roles  # (no grid: a time, a box)
                in_its_dtype[key] = in_its_dtype.get(key, False) or (
                    product.result.prec.may_be_16bit and not product.positions.prec.may_be_16bit)
        for creation in facts.creations:
            origin = creation.value.lost_precision()
            met = extents.get(node_key(creation.node))
            # frequencies, or a growing table: wavelengths the positions are divided by, or bands above one
            table = creation.value.has(Role.FREQS) or creation.value.has(Role.GROWTH)
            if table and origin is not None and origin.prec is Prec.DEFAULT and met and \
                    node_key(creation.node) not in learned:
                extent, assumed = (None, "") if any(e is None for e, _ in met) else max(met)
                consequence = rounded_frequencies(extent, ANGLE_ERROR_AT_8K, creation.value, default_dtype=True,
                                                  product_16bit=in_its_dtype[node_key(creation.node)],
                                                  divisor=not creation.value.has(Role.FREQS)
                                                  and divides[node_key(creation.node)],
                                                  over_input=inputs[node_key(creation.node)])
                if consequence is None:
                    continue  # every grid they meet is short enough for a negligible angle error
                consequence += assumed
                edits = make_float32(facts, origin.node)
                fix = Fix(tuple(edits), "safe", "compute the frequencies in float32", torch_attr(facts, "float32")[1]) \
                    if edits else None
                rounded = "they, and the angle product that takes their dtype, are" \
                    if in_its_dtype[node_key(creation.node)] else "they are"
                yield Finding(origin.node, f"frequencies take {origin.reason}; under a bfloat16 default dtype "
                                           f"{rounded} rounded to 8 bits and {consequence}",
                              fix)
