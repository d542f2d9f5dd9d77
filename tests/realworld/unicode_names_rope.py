"""旋转位置编码 (RoPE)：频率、位置与角度。Identifiers may be non-ASCII, as Python allows."""
import torch
from torch import nn


class 旋转编码(nn.Module):
    """Rotary embedding; comments and names in several scripts: θ, Δ, ünïcödé."""

    def __init__(self, 维度: int, θ: float = 10000.0):
        super().__init__()
        频率 = 1.0 / (θ ** (torch.arange(0, 维度, 2).float() / 维度))  # inv_freq
        self.register_buffer("inv_freq", 频率, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        长度 = x.shape[-2]
        位置 = torch.arange(长度, device=x.device, dtype=self.inv_freq.dtype)  # ← 位置 (positions)
        角度 = torch.outer(位置, self.inv_freq)
        emb = torch.cat((角度, 角度), dim=-1)
        return emb.cos().to(x.dtype) * x + emb.sin().to(x.dtype) * x


ΔMAX = "最大长度 → 8192"
