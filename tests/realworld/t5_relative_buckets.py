"""Learned relative position biases with log-spaced distance buckets: no rotary, no ALiBi.
Short distances get a bucket each; longer ones share buckets that widen logarithmically."""
import math

import torch
from torch import nn


def distance_bucket(distance, two_sided=True, buckets=32, far=128):
    bucket = torch.zeros_like(distance)
    if two_sided:
        buckets //= 2
        bucket = bucket + (distance > 0).long() * buckets
        distance = distance.abs()
    else:
        distance = (-distance).clamp(min=0)
    exact = buckets // 2
    log_scaled = torch.log(distance.float().clamp(min=1) / exact) / math.log(far / exact)
    wide = (exact + (log_scaled * (buckets - exact)).long()).clamp(max=buckets - 1)
    return bucket + torch.where(distance < exact, distance, wide)


class BucketBias(nn.Module):
    def __init__(self, two_sided=True, buckets=32, far=128, heads=8):
        super().__init__()
        self.two_sided, self.buckets, self.far = two_sided, buckets, far
        self.table = nn.Embedding(buckets, heads)

    def forward(self, queries, keys, device=None):
        q_pos = torch.arange(queries, dtype=torch.long, device=device)
        k_pos = torch.arange(keys, dtype=torch.long, device=device)
        buckets = distance_bucket(k_pos[None, :] - q_pos[:, None], self.two_sided, self.buckets, self.far)
        return self.table(buckets).permute(2, 0, 1)[None]  # [1, heads, queries, keys]
