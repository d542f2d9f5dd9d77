import ast

from poslint.analysis import Prec, Role, node_key
from poslint.core.diagnostics import Fix
from poslint.fix.blocks import atom, float32_copy_fix, in_function_of, insert_after, replace
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import rounded_angles, when


class LowPrecisionAngles(Rule):
    """
    ## What it does
    Finds RoPE angles (positions times frequencies, before cos/sin) held in 16 bits: angles cast
    to a 16-bit or activation dtype, angles kept in a registered buffer or parameter, and a
    complex `freqs_cis` registered as a buffer. Casting cos/sin values to the activation dtype
    is accepted practice and stays silent, and so is a buffer that construction registers empty
    (`register_buffer("freqs_cis", None)`) and only the forward path fills: the conversion
    between construction and forward finds nothing in it. A buffer that construction builds and
    forward rebuilds only past its length (`if n > len(cache): self.cache = ...`) is reported
    once, where construction builds it: the usual path reads the converted table; so is a table
    that later construction steps write back (a scaling of the same buffer). A random draw
    (torch's or numpy's) or a phase (`atan2`, `angle()`, within [-pi, pi]) cast and fed to cos
    and sin is not angles of positions, and neither is a value scaled on its way to them
    (`sin(t * pi / 2)` of a timestep cast to 16 bits is a phase of at most a quarter turn), nor
    a table computed from the module's own constants (angle-bin centres from a module-level
    `np.linspace(0, 2 * np.pi, 25)`, in its file or imported from the project): no sequence
    length makes it grow.
    Values that a rotary kernel also takes as its cos/sin tables (flash-attn's
    `apply_rotary_emb(x, cos, sin)`) are cos/sin values, whatever else takes their cos.
    Where the code gives the positions' range (a literal grid, a configuration class's defaults
    such as `image_size // patch_size`, handed to the constructor that builds the table), the
    message gives the largest angle and half a bfloat16 step there (a 52 x 52 grid: angles up to
    51 rad move by up to 0.12 rad), and angles that move by less than 0.03 rad are not reported;
    otherwise it assumes angles near 8192 rad.

    ## Why is this bad?
    Angles grow with the position: at 8192 rad, bfloat16 values are 64 apart, so cos/sin of a
    rounded angle is noise. `model.to(torch.bfloat16)` converts buffers; on a complex buffer it
    keeps only the real part (cos) and drops sin with a warning that is easy to miss, while
    `.half()` and `.bfloat16()` leave complex buffers alone.

    ## Example
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
            return emb.cos(), emb.sin()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class RotaryEmbedding(nn.Module):
        def __init__(self, dim, base=10000.0):
            super().__init__()
            self.dim = dim
            self.base = base

        def forward(self, x, seq_len):
            inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=x.device).float() / self.dim))
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)  # cast cos/sin, not the angles
    ```

    ## Fix safety
    For angles cast to 16 bits, the fix removes the cast from the angles and applies the same
    cast to every cos/sin computed from them, so the outputs keep their dtypes; it is safe. It
    is offered only when every cos/sin of those angles is in view and in the cast's own function
    (the cast's dtype expression, `x.dtype`, means nothing in another). For a buffer holding angles
    or a complex rotation, the fix is POS102's: the values are also kept as the bits of a
    non-persistent integer buffer (`int64` for `complex64`), which `module.to(dtype)` does not
    convert, and the forward path reads that view; cos/sin taken of the table's rows are cast back
    to the table's dtype (`torch.cos(angles).to(self.table.dtype)`), so the model hands out the
    dtypes it did. There is no fix where they are taken in another function, or where a read of
    the table goes elsewhere (returned to code out of view). It is unsafe: the module gains a buffer.
    """

    code = "POS104"
    name = "low-precision-angles"
    summary = "RoPE angles (not cos/sin) are cast to or stored in 16 bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device)
    freqs = steps.float()[:, None] * inv_freq[None, :]
    return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
""",
    ]
    INVALID = [
        """
import torch
def rope(x, inv_freq):
    steps = torch.arange(x.shape[-2], device=x.device)
    freqs = (steps.float()[:, None] * inv_freq[None, :]).to(x.dtype)
    return freqs.cos(), freqs.sin()
""",
    ]

    def check(self, facts):
        rotary = {node_key(product.node) for product in facts.rope_products()}
        for cast in facts.casts:
            before, after = cast.before, cast.after
            rotation = before.products & rotary or node_key(cast.node) in facts.rotations
            if before.has(Role.ANGLES) and rotation and after.prec.may_be_16bit:
                consequence = rounded_angles(facts, before)
                if consequence is not None:
                    yield Finding(cast.node, f"angles are cast to {after.origin.reason} before cos/sin; "
                                             f"{when(after.prec)}{consequence}", move_cast_to_cos_sin(facts, cast))
            elif before.has(Role.ROTARY_COMPLEX) and before.is_complex and not after.is_complex \
                    and after.prec is not Prec.UNKNOWN:  # a known real dtype, not an unknown .to(arg)
                yield Finding(cast.node, f"complex rotation is cast to the real dtype {after.origin.reason}, "
                                         "which drops the imaginary part (sin)")
        reported = set()  # (class, attribute, the angle products held): one table, reported once
        for store in facts.stores:
            if store.storage == "plain" or not facts.value_reads(store.attr, facts.related_classes(store.cls)):
                continue  # a tensor the forward path never reads cannot hurt
            if (store.cls, store.attr) in facts.filled_in_forward:
                continue  # registered empty, filled after any conversion: module.to() never sees it
            if store.site.runtime and not store.written and (store.cls, store.attr) in facts.built_at_construction:
                continue  # a new tensor bound in forward (a lazy rebuild) comes after any conversion
            value = store.value
            if value.has(Role.ROTARY_COMPLEX) and value.is_complex:
                yield Finding(store.node, f"complex rotation kept in {store.storage} '{store.attr}'; "
                                          "model.to(torch.bfloat16) makes it real, dropping sin",
                              float32_copy_fix(facts, store.attr, store.cls, value.is_complex))
            elif value.has(Role.ANGLES) and value.products & rotary:
                table = (store.cls, store.attr, frozenset(value.products & rotary))
                if table in reported:
                    continue  # the same angles written back by a later step (a scaling of the table)
                reported.add(table)
                consequence = rounded_angles(facts, value)
                if consequence is not None:
                    yield Finding(store.node, f"angles kept in {store.storage} '{store.attr}'; model.to("
                                              f"torch.bfloat16) rounds them, and {consequence}",
                                  float32_copy_fix(facts, store.attr, store.cls, value.is_complex))


def move_cast_to_cos_sin(facts, cast):
    """``emb = a.to(x.dtype); emb.cos()`` -> ``emb = a; emb.cos().to(x.dtype)``."""
    key = node_key(cast.node)
    consumers = [trig.node for trig in facts.trigs if trig.angle.origin is not None and trig.angle.origin.key == key]
    if not consumers or not in_function_of(facts, cast.node, consumers):
        return None  # the cast's dtype expression (``x.dtype``) means nothing in another function
    cast_start, cast_end = facts.span(cast.node)
    _, receiver_end = facts.span(cast.receiver_node)
    if not (cast_start <= receiver_end <= cast_end) or cast.receiver_node is cast.node:
        return None
    suffix = facts.text[receiver_end:cast_end]  # ".to(x.dtype)", ".half()", ...
    method = cast.node.func if isinstance(cast.node, ast.Call) else None
    if isinstance(method, ast.Attribute) and method.value is cast.receiver_node:
        # ``(t * f).to(x.dtype)``: the receiver's closing parenthesis stays with the receiver.
        suffix = f".{method.attr}{facts.text[facts.span(method)[1]:cast_end]}"
    edits = [replace(facts, cast.node, atom(facts, cast.receiver_node))]
    edits += [insert_after(facts, node, suffix) for node in {id(n): n for n in consumers}.values()]
    return Fix(tuple(edits), "safe", "cast cos/sin instead of the angles")
