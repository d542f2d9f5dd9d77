"""Configuration for the decoder model: plain data, validated on construction."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Optional, Union


@dataclass
class RopeScaling:
    kind: str = "linear"  # "linear", "dynamic" or "yarn"
    factor: float = 1.0
    original_max_position_embeddings: Optional[int] = None

    def __post_init__(self) -> None:
        if self.kind not in {"linear", "dynamic", "yarn"}:
            raise ValueError(f"unknown rope scaling kind {self.kind!r}")
        if self.factor < 1.0:
            raise ValueError("rope scaling factor must be >= 1")


@dataclass
class DecoderConfig:
    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: Optional[int] = None
    max_position_embeddings: int = 4096
    rope_theta: float = 10000.0
    rope_scaling: Optional[RopeScaling] = None
    rms_norm_eps: float = 1e-6
    torch_dtype: str = "bfloat16"
    extra: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be divisible by "
                f"num_attention_heads ({self.num_attention_heads})"
            )
        if isinstance(self.rope_scaling, dict):
            self.rope_scaling = RopeScaling(**self.rope_scaling)

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_json_file(cls, path: Union[str, "os.PathLike[str]"]) -> "DecoderConfig":
        with open(path, encoding="utf-8") as handle:
            return cls(**json.load(handle))

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}
