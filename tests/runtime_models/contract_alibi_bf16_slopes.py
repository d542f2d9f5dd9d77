# ALiBi slopes hard-coded to bfloat16 (checkpoints were trained with the rounded slopes) and
# an absolute bias cast to the activation dtype later.
import torch


def rounded_slope_bias(mask, n_heads, dtype):
    slopes = (2.0 ** (-8.0 * torch.arange(1, n_heads + 1) / n_heads)).bfloat16()
    keys = (mask.cumsum(-1) - 1) * mask
    bias = slopes.float()[:, None] * keys[None, :].float()
    return bias.to(dtype)


def attention_bias(hidden, mask, n_heads):
    return rounded_slope_bias(mask, n_heads, hidden.dtype)
