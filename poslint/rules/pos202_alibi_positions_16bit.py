from poslint.core.diagnostics import Fix
from poslint.fix.blocks import HARD_CODED_16BIT, hard_coded_16bit, make_float32, torch_attr
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import when


class AlibiPositions16Bit(Rule):
    """
    ## What it does
    Finds ALiBi key or query positions that are produced in 16 bits before they meet the
    slopes: an `arange` with a 16-bit, activation or buffer dtype, `.to(x.dtype)` on the
    positions, or positions in the default dtype. The mechanisms are those of POS101. Distances
    that are rounded only after they were made relative (key - query) stay silent: the small
    distances near the diagonal are exact in 16 bits. So do whole numbers that 16 bits hold
    (`arange(1, 5, dtype=x.dtype)`, per-head rates): where they multiply 16-bit distances, the
    distances' own indices are reported.

    ## Why is this bad?
    bfloat16 holds integers exactly only up to 256 and float16 up to 2048. Rounded positions
    give rounded distances, even when the bias is then built relative to the query: neighbouring
    keys get the same bias, and the diagonal is no longer zero.

    ## Example
    ```python
    import torch


    def alibi_bias(n_heads, q):
        seq_len = q.shape[-2]
        slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
        positions = torch.arange(seq_len, device=q.device, dtype=q.dtype)
        return slopes[:, None, None] * (positions[None, :] - positions[:, None])
    ```

    ## Use instead
    ```python
    import torch


    def alibi_bias(n_heads, q):
        seq_len = q.shape[-2]
        slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
        positions = torch.arange(seq_len, device=q.device)
        return slopes[:, None, None] * (positions[None, :] - positions[:, None])
    ```

    ## Fix safety
    The fix makes the positions float32 (exact for integers up to 2**24). It is offered only
    when the slopes are float32, so the bias had float32's dtype already; with 16-bit slopes the
    bias would turn float32, and there is no fix. Like every ALiBi fix it is unsafe: it changes
    the bias's numerics by design; positions hard-coded to 16 bits also change float32 results,
    which checkpoints may rely on.
    """

    code = "POS202"
    name = "alibi-positions-16bit"
    summary = "ALiBi positions are produced in 16 bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def alibi(q, slopes):
    positions = torch.arange(q.shape[1], device=q.device)
    return slopes[:, None, None] * (positions[None, :] - positions[:, None])[None]
""",
    ]
    INVALID = [
        """
import torch
def alibi(q, slopes):
    m = torch.exp2(-8.0 * torch.arange(1, 9) / 8)
    positions = torch.arange(q.shape[1], device=q.device, dtype=q.dtype)
    return m[:, None, None] * (positions[None, :] - positions[:, None])[None]
""",
    ]

    def check(self, facts):
        for product in facts.alibi_products():
            for origin in product.positions.precision_losses():
                if origin.relative or origin.exact:
                    # rounded after key - query: the near-diagonal distances stay exact; or whole
                    # numbers that 16 bits hold were rounded, which loses nothing
                    continue
                edits = make_float32(facts, origin.node)
                # float32 positions times 16-bit slopes would turn the bias float32: no fix then.
                fix = Fix(tuple(edits), "unsafe", "compute the ALiBi positions in float32"
                          + (HARD_CODED_16BIT if hard_coded_16bit(facts, origin.node) else ""),
                          torch_attr(facts, "float32")[1]) if edits and product.factor.prec.is_float32_or_better \
                    else None
                yield Finding(origin.node, f"ALiBi positions take {origin.reason}; {when(origin.prec)}"
                                           "bfloat16 holds integers exactly only up to 256", fix)
