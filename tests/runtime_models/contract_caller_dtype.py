import torch


def grid_sincos(height, width, dim, dtype, temperature=10000.0):
    rows = torch.arange(height, dtype=dtype)
    cols = torch.arange(width, dtype=dtype)
    yy, xx = torch.meshgrid(rows, cols, indexing="ij")
    quarter = dim // 4
    omega = 1.0 / temperature ** (torch.arange(quarter, dtype=dtype) / quarter)
    ay = torch.einsum("n,d->nd", yy.flatten(), omega)
    ax = torch.einsum("n,d->nd", xx.flatten(), omega)
    return torch.cat((ax.sin(), ax.cos(), ay.sin(), ay.cos()), dim=1)
