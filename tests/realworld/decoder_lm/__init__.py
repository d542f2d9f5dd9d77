"""A small decoder-only language model package, written in the style of modern LLM code."""

from .configuration import DecoderConfig
from .modeling import DecoderForCausalLM

__all__ = ["DecoderConfig", "DecoderForCausalLM"]
