# coding=utf-8
"""PyTorch LLaMA-style model, in the layout of a model zoo.

Docstrings use **Markdown**: `position_ids` are **not masked**, and so on.
"""
import math
from typing import Optional, Tuple

import torch
from torch import nn

from .configuration_llama_like import LlamaLikeConfig

logger = None
_CONFIG_FOR_DOC = "LlamaLikeConfig"


class LlamaLikeRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaLikeRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
        super().__init__()
        self.dim = dim
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class LlamaLikeAttention(nn.Module):
    def __init__(self, config: LlamaLikeConfig, layer_idx: Optional[int] = None):
        super().__init__()
        self.config = config
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, **kwargs):
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        attn_weights = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        return nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)


class LlamaLikeModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList([LlamaLikeAttention(config, i) for i in range(config.num_hidden_layers)])
        self.norm = LlamaLikeRMSNorm(config.hidden_size)
        self.rotary_emb = LlamaLikeRotaryEmbedding(config.hidden_size // config.num_attention_heads)

    def forward(self, inputs_embeds, position_ids=None, **kwargs):
        if position_ids is None:
            position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device).unsqueeze(0)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            hidden_states = layer(
                hidden_states,
                position_embeddings,
                # the mask is built by the caller
                **kwargs,
            )
        return self.norm(hidden_states)


class LlamaLikeForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = LlamaLikeModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, inputs_embeds, position_ids=None, labels=None, **kwargs):
        hidden_states = self.model(inputs_embeds, position_ids=position_ids, **kwargs)
        logits = self.lm_head(hidden_states)
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))
            logger.info(f"loss {loss.item():.3f} at {math.log(2) ** 2:.2f}")
        return logits
