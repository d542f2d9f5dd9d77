"""The measured consequences that rule messages quote (../shared/PRECISION.md)."""

from poslint.analysis import Prec

DISTINCT_BF16_8K = "only 897 of 8192 positions stay distinct in bfloat16"

WHEN_16BIT = {
    Prec.LOW: "",
    Prec.CONVERTED: "after model.to(torch.bfloat16) ",
    Prec.ACTIVATION: "with bfloat16 activations ",
    Prec.DEFAULT: "under a bfloat16 default dtype ",
}


def when(prec) -> str:
    """'after model.to(torch.bfloat16) ' and the like: the condition that makes ``prec`` 16-bit."""
    return WHEN_16BIT.get(prec, "")
