import math as m

import torch as T
from torch import arange as ar, exp as e


def freqs_exp(d, base=10000.0):
    idx = ar(0, d, 2)
    return e(-m.log(base) * idx / d)


def freqs_pow(d, theta=1e4):
    return T.pow(theta, -ar(0, d, 2, dtype=T.float32) / d)


def angles(n, d):
    t = ar(n, dtype=T.bfloat16)
    return T.outer(t, freqs_exp(d)).cos()


def angles_pow(n, d):
    t = ar(n).to(T.float16)
    f = freqs_pow(d)
    return T.einsum("i,j->ij", t, f)


def continued(n, d):
    t = ar(n).half()
    f = 1.0 / (10000.0 \
        ** (ar(0, d, 2) / d))
    return (t[:, None] * f[None, :]).sin()


def commented(n, d):
    f = torch_freqs(  # a comment that ends with a comma,
        d,
    )
    return f


def torch_freqs(d):
    return 1.0 / 10000 ** (
        # the exponent is on the next lines
        ar(0, d, 2) / d
    )


def use_commented(n, d):
    return T.outer(ar(n, dtype=T.bfloat16), commented(n, d))
