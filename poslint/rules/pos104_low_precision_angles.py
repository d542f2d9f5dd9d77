from poslint.analysis import Role
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import when


class LowPrecisionAngles(Rule):
    """
    ## What it does
    Finds RoPE angles (positions x frequencies, before cos/sin) held in 16 bits: angles cast
    to a 16-bit or activation dtype, angles kept in a registered buffer or parameter, and a
    complex `freqs_cis` registered as a buffer. Casting cos/sin values to the activation dtype
    is accepted practice and stays silent.

    ## Why is this bad?
    Angles grow with the position: at 8192 rad, bfloat16 values are 64 apart, so cos/sin of a
    rounded angle is noise. `model.to(torch.bfloat16)` converts buffers; on a complex buffer it
    keeps only the real part (cos) and drops sin with a warning that is easy to miss, while
    `.half()` and `.bfloat16()` leave complex buffers alone.

    ## Example
    ```python
    emb = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
    cos = emb.cos()
    ```

    ## Use instead
    ```python
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(x.dtype)
    ```

    ## Fix safety
    There is no automatic fix yet.
    """

    code = "POS104"
    name = "low-precision-angles"
    summary = "RoPE angles (not cos/sin) are cast to or stored in 16 bits"

    def check(self, facts):
        for cast in facts.casts:
            before, after = cast.before, cast.after
            if before.has(Role.ANGLES) and after.prec.may_be_16bit:
                yield Finding(cast.node, f"angles are cast to {after.origin.reason} before cos/sin; "
                                         f"{when(after.prec)}angles near 8192 rad are 64 apart in bfloat16")
            elif before.has(Role.ROTARY_COMPLEX) and before.is_complex and not after.is_complex:
                yield Finding(cast.node, f"complex rotation is cast to the real dtype {after.origin.reason}, "
                                         "which drops the imaginary part (sin)")
        for store in facts.stores:
            if store.storage == "plain":
                continue
            value = store.value
            if value.has(Role.ROTARY_COMPLEX) and value.is_complex:
                yield Finding(store.node, f"complex rotation kept in {store.storage} '{store.attr}'; "
                                          "model.to(torch.bfloat16) makes it real, dropping sin")
            elif value.has(Role.ANGLES):
                yield Finding(store.node, f"angles kept in {store.storage} '{store.attr}'; model.to(torch.bfloat16) "
                                          "rounds them, and angles near 8192 rad are 64 apart in bfloat16")
