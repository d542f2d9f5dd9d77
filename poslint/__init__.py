"""poslint: find positional-encoding precision bugs in PyTorch model code."""

__version__ = "0.1.0"
