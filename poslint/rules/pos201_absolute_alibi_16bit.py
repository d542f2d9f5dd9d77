from poslint.analysis import Prec, Role, node_key
from poslint.core.diagnostics import Fix
from poslint.fix.blocks import relative_to_query
from poslint.rules.base import Finding, Rule
from poslint.rules.consequences import when


class AbsoluteAlibi16Bit(Rule):
    """
    ## What it does
    Finds ALiBi biases built from *absolute* key positions (`slope * arange(S)`,
    `slope * (attention_mask.cumsum(-1) - 1)`) that are held in 16 bits: cast with `.to(dtype)`
    to a 16-bit or activation dtype, built from slopes cast with `.half()`/`.bfloat16()`, kept
    in a registered buffer (which `model.to(torch.bfloat16)` converts), or computed in the
    default dtype. Relative biases (key - query, zero on the diagonal) stay silent, whatever
    their dtype, however the difference is written (`k[None, :] - q[:, None]`, or GPT-NeoX's
    `rows + arange(0, -S, -1)`, a sum with the keys' positions negated, or a row of positions
    and its transpose, `abs(row.T - row)`; clamped at zero, `clamp(q - k, min=0)`, it stays
    relative); a bias measured from the last key (`key - (S - 1)`) is absolute, and so is a
    relative one shifted by an offset that bfloat16 may not hold (`key - query + (S - 1)`, the
    "inverted" form): its diagonal moves to that offset. A shift by a literal up to 256 keeps it
    relative. A bias already made in 16 bits (Falcon's bfloat16 slopes times absolute positions)
    is reported where it becomes 16-bit, not again at a later cast, which rounds nothing more (nor is
    a bias cast to the activations' dtype once, then again). A builder's flag that the caller leaves
    open (`build_alibi_bias(n, s, full=not causal)`) is followed one value at a time: the path where
    the bias stays absolute is reported.

    The slopes are recognised by their shape (a power-of-two geometric sequence), or by where
    the product goes (a geometric table whose product reaches cos and sin is frequencies, as an
    axial rotary's `logspace(0, k, n, base=2)` scales, not slopes): a position grid times a per-head factor whose values are not in the file
    (a constructor argument, a buffer, a parameter) that is handed to attention as a bias
    (`attn_mask=`, the input of `baddbmm`, a term of the scores that `softmax` normalises) is an
    ALiBi bias. A library's builder is known by what it does (transformers' BLOOM and Falcon
    `build_alibi_tensor(attention_mask, num_heads, dtype)`: slopes times the absolute positions of
    the mask, cast to `dtype`): asked for a 16-bit or activation dtype, its call is reported.

    ## Why is this bad?
    The absolute form relies on softmax being shift-invariant, but its magnitudes grow with the
    position. In bfloat16, near position 4096 values are 16-32 apart, so the keys nearest the
    query, which matter most, collapse onto a few values: at L=4096 the worst head keeps 3
    distinct values among the 64 nearest keys, with an error of 10.9 against the diagonal
    (32 heads with slopes `2**(-8/32*(i+1))`, the last query row; see
    [docs/precision.md](../precision.md) for how 16-bit floats round positions).

    ## Example
    ```python
    import torch


    def alibi_bias(n_heads, hidden_states):
        seq_len = hidden_states.shape[1]
        slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
        alibi = slopes[:, None] * torch.arange(seq_len)[None, :]
        return alibi.to(hidden_states.dtype)
    ```

    ## Use instead
    ```python
    import torch


    def alibi_bias(n_heads, hidden_states):
        seq_len = hidden_states.shape[1]
        slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
        positions = torch.arange(seq_len)
        distance = positions[None, :] - positions[:, None]  # key - query
        alibi = slopes[:, None, None] * distance[None]
        return alibi.to(hidden_states.dtype)
    ```

    ## Fix safety
    Every fix here is unsafe: it changes numerics by design. Where the bias is known to be a
    full [.., S, S] grid (expanded positions, or an [S, S] mask added to it), the fix subtracts
    each query's own entry before the cast, `bias - bias.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)`,
    which is `slope * (key - query)`: zero on the diagonal, exact near it in 16 bits, the same
    attention after softmax, and the same shape and dtype. A broadcast [.., 1, S] bias has no
    shape-preserving relative form: keeping it float32 would hand attention a bias of another
    dtype (`baddbmm` and SDPA raise on mixed dtypes), and casting it back to 16 bits collides
    again, so there is no fix. Neither is there for 16-bit slopes (float32 slopes change the
    float32 outputs that checkpoints were trained with, and leave the absolute bias's cast), a
    default-dtype product or a bias buffer (both would change the bias's dtype).
    """

    code = "POS201"
    name = "absolute-alibi-16bit"
    summary = "ALiBi bias from absolute positions is held in 16 bits"
    fix_availability = "sometimes"

    VALID = [
        """
import torch
def alibi(slopes, seq_len, dtype):
    positions = torch.arange(seq_len)
    distance = positions[None, :] - positions[:, None]
    return (slopes[:, None, None] * distance[None]).to(dtype)
""",
        """
import torch
def build(n_heads, seq_len, dtype):
    slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
    return (slopes[:, None] * torch.arange(seq_len)[None, :]).to(dtype)
def forward(x):
    return build(8, x.shape[1], torch.float32)
""",
    ]
    INVALID = [
        """
import torch
def build(n_heads, seq_len, dtype):
    slopes = torch.pow(2.0, -8.0 / n_heads * torch.arange(1, n_heads + 1, dtype=torch.float32))
    return (slopes[:, None] * torch.arange(seq_len)[None, :]).to(dtype)
def forward(x):
    return build(8, x.shape[1], x.dtype)
""",
    ]

    def check(self, facts):
        for cast in facts.casts:
            before, after = cast.before, cast.after
            # (a bias already made 16-bit, or cast to the activations' dtype before, lost its precision
    # there, where it is reported)
            if before.has(Role.BIAS) and before.relative is False and after.prec.may_be_16bit \
                    and before.prec not in (Prec.LOW, Prec.ACTIVATION):
                yield Finding(cast.node, f"ALiBi bias from absolute positions is cast to {after.origin.reason}; "
                                         f"{when(after.prec)}{_COLLAPSE}", _cast_fix(facts, cast))
        for store in facts.stores:
            value = store.value
            if store.storage != "plain" and value.has(Role.BIAS) and value.relative is False \
                    and facts.value_reads(store.attr, facts.related_classes(store.cls)):
                # No fix: float32 bits read back would hand attention a bias of another dtype.
                yield Finding(store.node, f"ALiBi bias from absolute positions kept in {store.storage} "
                                          f"'{store.attr}'; after model.to(torch.bfloat16) {_COLLAPSE}")
        cast_later = {key for cast in facts.casts if cast.after.prec.may_be_16bit for key in cast.before.products}
        for product in facts.alibi_products():
            if product.positions.relative is not False:
                continue
            slopes = product.factor.lost_precision()
            if slopes is not None and slopes.prec is not Prec.DEFAULT:
                # No fix: float32 slopes alone leave the absolute bias's cast, and change its dtype.
                yield Finding(slopes.node, f"ALiBi slopes take {slopes.reason} and multiply absolute positions; "
                                           f"{when(slopes.prec)}{_COLLAPSE}")
            elif product.result.prec is Prec.DEFAULT and node_key(product.node) not in cast_later \
                    and node_key(product.node) in facts.escaped:
                # No fix: a float32 bias would change the dtype handed to attention under a 16-bit default.
                yield Finding(product.node, "ALiBi bias from absolute positions is computed in the default dtype; "
                                            f"under a bfloat16 default dtype {_COLLAPSE}")


def _cast_fix(facts, cast):
    """A full [.., S, S] bias becomes relative to each query before the cast (dtype kept); a
    broadcast [.., 1, S] bias has no such form and stays float32 (the cast is dropped)."""
    if cast.receiver_node is cast.node:
        return None
    if cast.before.thin is False:
        return Fix((relative_to_query(facts, cast.receiver_node),), "unsafe",
                   "make the ALiBi bias relative to each query (key - query) before the cast")
    return None  # float32 would reach attention in a dtype it did not have; a 16-bit cast collides again


_COLLAPSE = "near position 4096 the 64 keys nearest the query collapse to a handful of distinct values"
