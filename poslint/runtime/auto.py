"""Build a verify target from a plain class or function, without a hand-written factory.

- an `nn.Module` subclass: a rotary embedding built from `(dim, max_position_embeddings, base)`
  or from a config object (`--config-class`); it is called as `forward(x, position_ids)` or
  `forward(x, seq_len=...)`, whatever its signature asks for;
- a function with a mask and a head count (`build_alibi_tensor(attention_mask, num_heads, dtype)`):
  an ALiBi bias builder, called with a mask of ones and the scenario's dtype.

Constructor arguments come from `--arg NAME=VALUE`; the report says when they hide a code path.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any, Callable, Dict, Optional

import torch
from torch import nn

from poslint.runtime.loader import VerifyError

HEAD_DIM = 128
_DIM_NAMES = ("dim", "head_dim", "rotary_dim", "d_head", "embed_dim", "size")
_MAX_NAMES = ("max_position_embeddings", "max_seq_len", "max_len", "max_seq_len_cached", "max_positions")
_MASK_NAMES = ("attention_mask", "mask", "key_padding_mask")
_HEAD_NAMES = ("num_heads", "n_heads", "n_head", "num_attention_heads", "heads")
_ACTIVATION_NAMES = ("x", "q", "query", "value", "hidden_states", "inputs", "input", "t", "tensor", "k")


def parse_args(pairs) -> Dict[str, Any]:
    """`NAME=VALUE` strings -> a dict; VALUE is a Python literal (`4096`, `1e4`, `None`) or a string."""
    parsed: Dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise VerifyError(f"--arg expects NAME=VALUE, got {pair!r}")
        try:
            parsed[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed[name] = value
    return parsed


def is_plain_target(obj: Any) -> bool:
    """A class or an ALiBi-shaped function, rather than a factory."""
    if isinstance(obj, type):
        return issubclass(obj, nn.Module)
    return callable(obj) and _alibi_params(obj) is not None


def make_factory(obj: Any, args: Dict[str, Any], config_class: Optional[Callable] = None) -> Callable:
    if isinstance(obj, type):
        return _rotary_factory(obj, args, config_class)
    return _alibi_factory(obj, args)


def _parameters(fn) -> Dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError) as exc:
        raise VerifyError(f"cannot read the signature of {getattr(fn, '__name__', fn)}: {exc}") from exc


def _rotary_factory(cls: type, args: Dict[str, Any], config_class: Optional[Callable]) -> Callable:
    params = {k: v for k, v in _parameters(cls.__init__).items() if k != "self"}
    takes_config = "config" in params

    def build(seq_len: int):
        kwargs = dict(args)
        if takes_config:
            if config_class is None:
                raise VerifyError(f"{cls.__name__}(config, ...) needs --config-class CLASS to build its config")
            config_args = {k: v for k, v in kwargs.items() if k not in params}
            config = config_class(**config_args)
            ctor = {"config": config, **{k: v for k, v in kwargs.items() if k in params}}
            dim = _config_head_dim(config)
            max_positions = next((getattr(config, n) for n in _MAX_NAMES if hasattr(config, n)), None)
        else:
            dim_name = next((n for n in _DIM_NAMES if n in params), None)
            if dim_name is not None:
                kwargs.setdefault(dim_name, HEAD_DIM)
            ctor = {k: v for k, v in kwargs.items() if k in params or _takes_kwargs(params)}
            missing = [k for k, p in params.items() if p.default is p.empty and k not in ctor
                       and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if missing:
                raise VerifyError(f"{cls.__name__} needs {', '.join(missing)}: pass --arg {missing[0]}=VALUE")
            dim = ctor.get(dim_name, HEAD_DIM) if dim_name else HEAD_DIM
            max_name = next((n for n in _MAX_NAMES if n in params), None)
            max_positions = ctor.get(max_name, params[max_name].default) if max_name else None
        try:
            module = cls(**ctor)
        except Exception as exc:
            raise VerifyError(f"{cls.__name__}(**{ctor!r}) raised {type(exc).__name__}: {exc}") from exc
        call = _rotary_call(module, dim, seq_len)
        notes = []
        if isinstance(max_positions, int) and max_positions >= seq_len:
            notes.append(f"max_position_embeddings={max_positions} >= {seq_len} positions: a cos/sin cache built at "
                         "construction is used as is, and a rebuild in forward is not run; pass --arg "
                         "max_position_embeddings=<fewer> (or a longer --seq-len) to run it")
        return call, notes

    def poslint_factory(seq_len: int = 8192):
        (module, make_inputs), notes = build(seq_len)
        return module, make_inputs, {"kind": "rotary", "position_axis": -2, "notes": notes}

    return poslint_factory


def _takes_kwargs(params) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in params.values())


def _config_head_dim(config) -> int:
    head_dim = getattr(config, "head_dim", None)
    if isinstance(head_dim, int):
        return head_dim
    hidden, heads = getattr(config, "hidden_size", None), getattr(config, "num_attention_heads", None)
    if isinstance(hidden, int) and isinstance(heads, int) and heads:
        return hidden // heads
    return HEAD_DIM


class _Called(nn.Module):
    """`module(*inputs, **fixed)`: the rotary module with keyword arguments its forward asks for."""

    def __init__(self, module: nn.Module, fixed: Dict[str, Any]):
        super().__init__()
        self.inner = module
        self.fixed = fixed

    def forward(self, *inputs):
        return self.inner(*inputs, **self.fixed)


def _rotary_call(module: nn.Module, dim: int, seq_len: int):
    """Inputs for `forward`: an activation [1, 1, seq_len, dim] in the scenario dtype, int64
    position ids [1, seq_len], and `seq_len=` where the signature has it."""
    params = [p for name, p in _parameters(module.forward).items() if name != "self"]
    order, fixed = [], {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        name = p.name
        if name in ("position_ids", "positions", "pos", "position"):
            order.append("positions")
        elif name in ("seq_len", "seqlen", "seq_length", "length", "n"):
            fixed[name] = seq_len
        elif name in _ACTIVATION_NAMES and not order:
            order.append("activation")
        elif p.default is p.empty:
            raise VerifyError(f"{type(module).__name__}.forward takes {name!r}, which verify cannot fill; "
                              "write a poslint_factory (docs/verify.md)")

    def make_inputs(dtype):
        values = {"activation": torch.zeros(1, 1, seq_len, dim, dtype=dtype),
                  "positions": torch.arange(seq_len)[None, :]}
        return tuple(values[kind] for kind in order)

    return _Called(module, fixed), make_inputs


def _alibi_params(fn) -> Optional[Dict[str, str]]:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    mask = next((n for n in names if n in _MASK_NAMES), None)
    heads = next((n for n in names if n in _HEAD_NAMES), None)
    if mask is None or heads is None:
        return None
    return {"mask": mask, "heads": heads}


class _Bias(nn.Module):
    def __init__(self, fn: Callable, fixed: Dict[str, Any], takes_dtype: bool):
        super().__init__()
        self.fn = fn
        self.fixed = fixed
        self.takes_dtype = takes_dtype

    def forward(self, mask, like):
        extra = {"dtype": like.dtype} if self.takes_dtype else {}
        return self.fn(mask, **self.fixed, **extra)


def _alibi_factory(fn: Callable, args: Dict[str, Any]) -> Callable:
    names = _alibi_params(fn)
    params = _parameters(fn)
    fixed = {k: v for k, v in args.items() if k in params}
    fixed.setdefault(names["heads"], 8)
    missing = [k for k, p in params.items() if p.default is p.empty and k not in fixed
               and k not in (names["mask"], "dtype")]
    if missing:
        raise VerifyError(f"{fn.__name__} needs {', '.join(missing)}: pass --arg {missing[0]}=VALUE")
    if list(params)[0] != names["mask"]:
        raise VerifyError(f"{fn.__name__}: the mask must be its first parameter; write a poslint_factory")

    def poslint_factory(seq_len: int = 8192):
        module = _Bias(fn, fixed, "dtype" in params)

        def make_inputs(dtype):
            # The scenario's dtype travels as a zero-size tensor: inputs are tensors, and the
            # float64 reference lifts it like any activation.
            return torch.ones(1, seq_len, dtype=torch.int64), torch.zeros(0, dtype=dtype)

        return module, make_inputs, {"kind": "alibi"}

    return poslint_factory
