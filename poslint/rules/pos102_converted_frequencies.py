from poslint.analysis import Prec
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import when

LOW_FACTOR = (Prec.CONVERTED, Prec.LOW, Prec.ACTIVATION)


class LowPrecisionFrequencies(Rule):
    """
    ## What it does
    Finds RoPE frequencies that enter the angle product in 16 bits: an `inv_freq` held in a
    registered buffer or `nn.Parameter` (which `model.to(torch.bfloat16)` converts) and used
    as it is, or frequencies cast to 16 bits (`.half()`, `.to(x.dtype)`) before the product.
    It reports the place where they are consumed.

    ## Why is this bad?
    `module.to(dtype)` converts every floating buffer and parameter, persistent or not. A
    bfloat16 `inv_freq` carries 8 significant bits: at position 8191 the angle error reaches
    pi, and the positions collide (PRECISION.md, section 5).

    ## Example
    ```python
    self.register_buffer("inv_freq", inv_freq, persistent=False)
    ...
    freqs = torch.outer(t, self.inv_freq)
    ```

    ## Use instead
    Recompute the frequencies in float32 where they are used, from the values that built them,
    or keep a float32 copy where `module.to()` cannot reach it (a plain attribute), moved to the
    input's device at use.

    ## Fix safety
    There is no automatic fix yet: where the values that built the buffer are at hand, rewrite
    the use by hand as above.
    """

    code = "POS102"
    name = "low-precision-frequencies"
    summary = "RoPE frequencies enter the angle product in 16 bits (converted buffer or 16-bit cast)"

    def check(self, facts):
        for product in facts.products:
            factor = product.factor
            if product.kind != "rope" or factor.prec not in LOW_FACTOR or factor.origin is None:
                continue
            if factor.prec is Prec.CONVERTED:
                message = (f"frequencies from {factor.origin.reason} enter the angle product unconverted; "
                           "model.to(torch.bfloat16) rounds them, and the angle error reaches pi by position 8191")
                yield Finding(product.factor_node, message)
            else:
                message = (f"frequencies are cast to {factor.origin.reason} before the angle product; "
                           f"{when(factor.prec)}the angle error reaches pi by position 8191")
                yield Finding(factor.origin.node, message)
