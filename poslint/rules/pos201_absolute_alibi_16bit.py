from poslint.analysis import Prec, Role, node_key
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
    their dtype.

    ## Why is this bad?
    The absolute form relies on softmax being shift-invariant, but its magnitudes grow with the
    position. In bfloat16, near position 4096 values are 16-32 apart, so the keys nearest the
    query, which matter most, collapse onto a few values: at L=4096 the worst head keeps 3
    distinct values among the 64 nearest keys, with an error of 10.9 against the diagonal
    (PRECISION.md, section 6).

    ## Example
    ```python
    alibi = slopes[:, None] * torch.arange(seq_len)[None, :]
    return alibi.to(hidden_states.dtype)
    ```

    ## Use instead
    ```python
    positions = torch.arange(seq_len)
    distance = positions[None, :] - positions[:, None]  # key - query
    alibi = slopes[:, None, None] * distance[None]
    return alibi.to(hidden_states.dtype)
    ```

    ## Fix safety
    There is no automatic fix yet. A full [.., S, S] bias can be rewritten to relative
    distances; a broadcast [.., 1, S] bias has no shape-preserving relative form and must
    instead stay float32 until it is added to float32 scores, which costs float32 attention.
    """

    code = "POS201"
    name = "absolute-alibi-16bit"
    summary = "ALiBi bias from absolute positions is held in 16 bits"

    def check(self, facts):
        for cast in facts.casts:
            before, after = cast.before, cast.after
            if before.has(Role.BIAS) and before.relative is False and after.prec.may_be_16bit:
                yield Finding(cast.node, f"ALiBi bias from absolute positions is cast to {after.origin.reason}; "
                                         f"{when(after.prec)}{_COLLAPSE}")
        for store in facts.stores:
            value = store.value
            if store.storage != "plain" and value.has(Role.BIAS) and value.relative is False:
                yield Finding(store.node, f"ALiBi bias from absolute positions kept in {store.storage} "
                                          f"'{store.attr}'; after model.to(torch.bfloat16) {_COLLAPSE}")
        cast_later = {key for cast in facts.casts if cast.after.prec.may_be_16bit for key in cast.before.products}
        for product in facts.products:
            if product.kind != "alibi" or product.positions.relative is not False:
                continue
            slopes = product.factor.lost_precision()
            if slopes is not None and slopes.prec is not Prec.DEFAULT:
                yield Finding(slopes.node, f"ALiBi slopes take {slopes.reason} and multiply absolute positions; "
                                           f"{when(slopes.prec)}{_COLLAPSE}")
            elif product.result.prec is Prec.DEFAULT and node_key(product.node) not in cast_later:
                yield Finding(product.node, "ALiBi bias from absolute positions is computed in the default dtype; "
                                            f"under a bfloat16 default dtype {_COLLAPSE}")


_COLLAPSE = "near position 4096 the 64 keys nearest the query collapse to a handful of distinct values"
