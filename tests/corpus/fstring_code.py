import torch


def report(n, dim):
    print(f"{torch.outer(torch.arange(n, dtype=torch.bfloat16), 1.0 / 10000 ** (torch.arange(0, dim, 2) / dim)).shape}")


def helper(d):
    return f"{d!r} {'no positions here'}"
