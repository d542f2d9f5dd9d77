# coding=utf-8
"""A small decoder-only transformer: pre-norm blocks, grouped-query attention with rotary
positions, a gated MLP and a key/value cache for generation."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

from .configuration import DecoderConfig
from .rotary import InterpolatedRotaryTable, RotaryTable, StretchedBaseRotaryTable, rotate

log = logging.getLogger(__name__)


class ScaleNorm(nn.Module):
    """Root-mean-square normalisation, computed in float32 whatever the input dtype."""

    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wide = x.float()
        wide = wide * torch.rsqrt(wide.square().mean(dim=-1, keepdim=True) + self.eps)
        return self.gain * wide.type_as(x)


@dataclass
class LayerCache:
    keys: torch.Tensor
    values: torch.Tensor

    @property
    def length(self) -> int:
        return self.keys.shape[-2]

    def extend(self, keys: torch.Tensor, values: torch.Tensor) -> "LayerCache":
        return LayerCache(torch.cat([self.keys, keys], dim=-2), torch.cat([self.values, values], dim=-2))


def share_kv_heads(states: torch.Tensor, groups: int) -> torch.Tensor:
    """[batch, kv_heads, time, dim] -> [batch, kv_heads * groups, time, dim]."""
    return states if groups == 1 else states.repeat_interleave(groups, dim=1)


ROPE_TABLES = {None: RotaryTable, "linear": InterpolatedRotaryTable, "dynamic": StretchedBaseRotaryTable}


class GroupedQueryAttention(nn.Module):
    def __init__(self, config: DecoderConfig, index: int = 0):
        super().__init__()
        self.index = index
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        self.qkv = nn.Linear(config.hidden_size, (self.heads + 2 * self.kv_heads) * self.head_dim, bias=False)
        self.out = nn.Linear(self.heads * self.head_dim, config.hidden_size, bias=False)
        scaling = config.rope_scaling
        kind = None if scaling is None else scaling.kind
        if kind not in ROPE_TABLES:
            raise NotImplementedError(f"layer {index}: no rotary table for scaling {kind!r}")
        options = {} if scaling is None else {"factor": scaling.factor}
        self.rope = ROPE_TABLES[kind](self.head_dim, config.max_position_embeddings, config.rope_theta, **options)

    def forward(self, x: torch.Tensor, positions: torch.LongTensor, mask: Optional[torch.Tensor] = None,
                cache: Optional[LayerCache] = None) -> Tuple[torch.Tensor, LayerCache]:
        batch, time, _ = x.shape
        q, k, v = self.qkv(x).split([self.heads * self.head_dim, self.kv_heads * self.head_dim,
                                     self.kv_heads * self.head_dim], dim=-1)
        q = q.view(batch, time, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, time, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, time, self.kv_heads, self.head_dim).transpose(1, 2)
        total = time + (cache.length if cache is not None else 0)
        cos, sin = self.rope(v, length=total)
        q, k = rotate(q, k, cos, sin, positions)
        cache = LayerCache(k, v) if cache is None else cache.extend(k, v)
        groups = self.heads // self.kv_heads
        attended = F.scaled_dot_product_attention(q, share_kv_heads(cache.keys, groups),
                                                  share_kv_heads(cache.values, groups), attn_mask=mask,
                                                  is_causal=mask is None and time > 1)
        return self.out(attended.transpose(1, 2).reshape(batch, time, -1)), cache


class GatedMLP(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.gate_up = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=False)
        self.down = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, config: DecoderConfig, index: int):
        super().__init__()
        self.attn_norm = ScaleNorm(config.hidden_size, config.rms_norm_eps)
        self.attn = GroupedQueryAttention(config, index)
        self.mlp_norm = ScaleNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = GatedMLP(config)

    def forward(self, x, positions, mask=None, cache=None):
        attended, cache = self.attn(self.attn_norm(x), positions, mask, cache)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), cache


class DecoderForCausalLM(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.blocks = nn.ModuleList(Block(config, i) for i in range(config.num_hidden_layers))
        self.final_norm = ScaleNorm(config.hidden_size, config.rms_norm_eps)
        self.head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.checkpointing = False

    def forward(self, tokens: torch.LongTensor, labels: Optional[torch.LongTensor] = None,
                caches: Optional[List[LayerCache]] = None):
        offset = caches[0].length if caches else 0
        positions = offset + torch.arange(tokens.shape[1], device=tokens.device)[None, :]
        x = self.embed(tokens)
        new_caches = []
        for i, block in enumerate(self.blocks):
            cache = caches[i] if caches else None
            if self.checkpointing and self.training:
                x, cache = torch.utils.checkpoint.checkpoint(block, x, positions, None, cache, use_reentrant=False)
            else:
                x, cache = block(x, positions, cache=cache)
            new_caches.append(cache)
        logits = self.head(self.final_norm(x)).float()
        if labels is None:
            return logits, new_caches
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(), ignore_index=-100)
        log.debug("loss %.4f", loss.item())
        return loss
