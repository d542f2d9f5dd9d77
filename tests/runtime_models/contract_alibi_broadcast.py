# A broadcast [heads, 1, S] ALiBi bias from absolute key positions, cast to the activation dtype
# and added to bf16 scores by baddbmm, which needs one dtype for all its operands.
import torch


def key_bias(mask, n_heads, dtype):
    slopes = 2.0 ** (-8.0 * torch.arange(1, n_heads + 1, dtype=torch.float32) / n_heads)
    keys = (mask.cumsum(-1) - 1) * mask
    bias = slopes[:, None] * keys.float()
    return bias[:, None, :].to(dtype)


def attention_bias(hidden, mask, n_heads):
    return key_bias(mask, n_heads, hidden.dtype)
