"""Modes used by the verifier: float64 lifting, CUDA-autocast emulation, TF32 emulation, angle capture."""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Callable, Dict, List, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

# Ops that CUDA autocast runs in the low dtype (PRECISION.md section 4). CPU autocast lowers the
# same ones except einsum, addmv, addr, mv, chain_matmul and linalg_multi_dot.
CUDA_LOWERED_OPS = frozenset(
    {
        "einsum",
        "matmul",
        "__matmul__",
        "__rmatmul__",
        "mm",
        "bmm",
        "baddbmm",
        "addbmm",
        "addmm",
        "addmv",
        "addr",
        "mv",
        "linear",
        "chain_matmul",
        "multi_dot",
        "linalg_multi_dot",
    }
)

_ANGLE_OPS = frozenset({"cos", "sin"})

_LIFT = {
    torch.bfloat16: torch.float64,
    torch.float16: torch.float64,
    torch.float32: torch.float64,
    torch.complex32: torch.complex128,
    torch.complex64: torch.complex128,
}

_LOW_TYPE_NAMES = ("BFloat16Tensor", "HalfTensor", "FloatTensor")


def lift_dtype(dtype: Any) -> Any:
    """float32/bf16/fp16 become float64 and complex32/complex64 complex128; anything else is kept."""
    return _LIFT.get(dtype, dtype) if isinstance(dtype, torch.dtype) else dtype


def cpu_autocast_state() -> Tuple[bool, torch.dtype]:
    """Whether CPU autocast is enabled right now, and its dtype (works on torch 2.1 and later)."""
    try:
        return torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    except (TypeError, AttributeError):  # torch < 2.4 has only the CPU-specific functions
        return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()


def _name(func: Callable) -> str:
    return getattr(func, "__name__", "")


class RunMode(TorchFunctionMode):
    """One mode for one run of a module.

    lift: rewrite 16/32-bit float (and complex64) dtype requests to float64, so that code which
        hard-codes `.half()`, `.bfloat16()`, `.float()`, `.to(torch.bfloat16)`, `.type(...)` or
        `dtype=torch.float16` computes its intended math in float64 (the reference run). A bit
        reinterpretation of a float64 tensor to a narrower dtype (`.float().view(torch.int32)`,
        used to keep float32 bits in an integer buffer) keeps the float64 values, so that the
        matching `.view(torch.float32)` gets them back.
    emulate_cuda: while CPU autocast is enabled, run the ops of CUDA's lowered list on inputs cast to
        the autocast dtype, as CUDA autocast would (float64 inputs are left alone, as on CUDA).
    capture: keep a float64 copy of every angle given to cos/sin (function or method) or to
        torch.polar, in call order.
    keep_low: with lift, leave requests for bfloat16/float16 as they are (only float32 and
        complex64 are lifted), so that a dtype the code hard-codes, which checkpoints may have been
        trained with, is part of the reference; each such request is listed in `kept` by the line
        of user code that made it.
    """

    def __init__(self, *, lift: bool = False, emulate_cuda: bool = False, capture: bool = True,
                 keep_low: bool = False):
        super().__init__()
        self.lift = lift
        self.emulate_cuda = emulate_cuda
        self.capture = capture
        self.keep_low = keep_low
        self.angles: List[torch.Tensor] = []
        self.kept: Dict[str, None] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = _name(func)
        if self.lift:
            if _is_narrowing_bit_view(func, args, kwargs):
                return args[0].view(args[0].shape)
            if self.keep_low and _requests_low(func, args, kwargs):
                self.kept[f"{_user_line()} {_describe(func, args, kwargs)}"] = None
            else:
                func, args, kwargs = self._lifted(func, args, kwargs)
        if self.emulate_cuda and name in CUDA_LOWERED_OPS:
            enabled, low = cpu_autocast_state()
            if enabled:
                args, kwargs = tree_map(lambda a: _cast_eligible(a, low), (args, kwargs))
        if self.capture:
            self._capture(name, args, kwargs)
        return func(*args, **kwargs)

    @staticmethod
    def _lifted(func, args: tuple, kwargs: Dict[str, Any]):
        if "dtype" in kwargs:
            kwargs["dtype"] = lift_dtype(kwargs["dtype"])
        if func in (torch.Tensor.half, torch.Tensor.bfloat16, torch.Tensor.float):
            return torch.Tensor.double, args, kwargs
        if func is torch.Tensor.to:
            args = tuple(lift_dtype(a) for a in args)
        elif func is torch.Tensor.type and len(args) > 1:
            wanted = args[1]
            if isinstance(wanted, str) and wanted.endswith(_LOW_TYPE_NAMES):
                wanted = torch.float64
            args = (args[0], lift_dtype(wanted)) + tuple(args[2:])
        return func, args, kwargs

    def _capture(self, name: str, args: tuple, kwargs: Dict[str, Any]) -> None:
        if name in _ANGLE_OPS:
            angle = args[0] if args else kwargs.get("input")
        elif name == "polar":
            angle = args[1] if len(args) > 1 else kwargs.get("angle")
        else:
            return
        if isinstance(angle, torch.Tensor) and angle.is_floating_point():
            self.angles.append(angle.detach().to(torch.float64, copy=True))


# The aten GEMMs that a float32 matmul reaches (``@``, matmul, mm, bmm, linear, ... decompose
# into these), which cuBLAS runs on TF32 tensor cores when TF32 is allowed. einsum without a
# summed index becomes aten.mul, which TF32 leaves alone, as on the GPU.
TF32_GEMMS = frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "_addmm_activation"})


def round_to_tf32(t: torch.Tensor) -> torch.Tensor:
    """float32 ``t`` rounded to TF32 (10 explicit mantissa bits, 8 exponent bits), to nearest,
    ties to even, as float32; infinities and NaNs are left as they are."""
    bits = t.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    rounded = torch.where(rounded >= 1 << 31, rounded - (1 << 32), rounded).to(torch.int32).view(torch.float32)
    return torch.where(torch.isfinite(t), rounded, t)


class Tf32Matmuls(TorchDispatchMode):
    """Emulate TF32 matmuls on CPU: the float32 inputs of every GEMM (:data:`TF32_GEMMS`) are
    rounded to TF32, and the product is accumulated in float32, as tensor cores do when
    ``torch.backends.cuda.matmul.allow_tf32`` is True (or the matmul precision is "high"). The
    bias of addmm/baddbmm is added in float32, unrounded, as cuBLAS does with beta. The figures
    rest on the documented TF32 format; real tensor cores may truncate instead of rounding,
    which makes errors up to twice as large, never smaller."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name in TF32_GEMMS:
            first = 1 if name in ("addmm", "baddbmm", "addbmm", "_addmm_activation") else 0
            args = tuple(round_to_tf32(a) if i >= first and isinstance(a, torch.Tensor) and a.dtype == torch.float32
                         else a for i, a in enumerate(args))
        return func(*args, **kwargs)


_LOW = (torch.bfloat16, torch.float16)
_LOW_TENSOR_TYPES = ("BFloat16Tensor", "HalfTensor")


def _requests_low(func, args: tuple, kwargs: Dict[str, Any]) -> bool:
    """A request for a 16-bit float written into the code: `.half()`, `.bfloat16()`,
    `.to(torch.bfloat16)`, `.type(torch.float16)` or `dtype=torch.bfloat16`."""
    if func in (torch.Tensor.half, torch.Tensor.bfloat16) or _is_low(kwargs.get("dtype")):
        return True
    if func in (torch.Tensor.to, torch.Tensor.type):
        return any(_is_low(a) or isinstance(a, str) and a.endswith(_LOW_TENSOR_TYPES) for a in args[1:])
    return False


def _is_low(value: Any) -> bool:
    return isinstance(value, torch.dtype) and value in _LOW


def _describe(func, args: tuple, kwargs: Dict[str, Any]) -> str:
    if func in (torch.Tensor.half, torch.Tensor.bfloat16):
        return f".{func.__name__}()"
    dtype = kwargs.get("dtype") if _is_low(kwargs.get("dtype")) else next(
        a for a in args[1:] if _is_low(a) or isinstance(a, str))
    return f"{_name(func)}(..., {str(dtype).replace('torch.', '')})"


def _user_line() -> str:
    """`file.py:LINE` of the innermost caller outside torch and poslint."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_LIBRARY_DIRS) and "<frozen" not in filename:
            return f"{os.path.basename(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


_LIBRARY_DIRS = (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _is_narrowing_bit_view(func, args: tuple, kwargs: Dict[str, Any]) -> bool:
    if func is not torch.Tensor.view or len(args) != 2 or kwargs:
        return False
    source, dtype = args
    return (isinstance(dtype, torch.dtype) and source.dtype in (torch.float64, torch.complex128)
            and dtype.itemsize < source.dtype.itemsize)


def _cast_eligible(value: Any, low: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
        return value.to(low)
    return value


def wrapped_angle_error(angle: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """|angle - reference| reduced to [0, pi]; non-finite angles count as the worst error, pi."""
    diff = torch.remainder(angle - reference + math.pi, 2 * math.pi) - math.pi
    return diff.abs_().nan_to_num_(nan=math.pi)  # remainder(inf) is NaN


def pair_by_order_and_shape(
    got: List[torch.Tensor], ref: List[torch.Tensor]
) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    """Pair the k-th capture of each shape with the reference's k-th capture of that shape."""
    by_shape: Dict[Tuple[int, ...], List[torch.Tensor]] = {}
    for r in ref:
        by_shape.setdefault(tuple(r.shape), []).append(r)
    used: Dict[Tuple[int, ...], int] = {}
    pairs = []
    for g in got:
        shape = tuple(g.shape)
        k = used.get(shape, 0)
        candidates = by_shape.get(shape, [])
        if k < len(candidates):
            pairs.append((g, candidates[k]))
            used[shape] = k + 1
    return pairs
