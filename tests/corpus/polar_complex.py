import torch


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)


class Attention(torch.nn.Module):
    def __init__(self, dim, end):
        super().__init__()
        self.register_buffer("freqs_cis", precompute_freqs_cis(dim, end))

    def forward(self, x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * self.freqs_cis[: x.shape[1]]).flatten(3).type_as(x)
