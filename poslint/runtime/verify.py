"""Run a positional-encoding module in 16-bit scenarios and compare it with its float64 self."""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch
from torch import nn

from poslint.runtime.loader import VerifyError
from poslint.runtime.modes import RunMode, Tf32Matmuls, pair_by_order_and_shape, wrapped_angle_error

SCENARIOS: Tuple[str, ...] = ("bf16", "fp16", "autocast-cpu", "autocast-cuda-emulated")
# Run on request: building and running under a bf16 default dtype exposes default-dtype bugs.
# tf32-emulated: float32 throughout, with every GEMM's inputs rounded to TF32 (10 mantissa bits),
# as on a GPU with allow_tf32 or float32_matmul_precision("high") (modes.Tf32Matmuls).
# fp32: float32 module and inputs, nothing else: what float32 alone does (long contexts, POS301).
EXTRA_SCENARIOS: Tuple[str, ...] = ("bf16-default", "tf32-emulated", "fp32")
DEFAULT_SEQ_LEN = 8192
ALIBI_NEAREST = 64


@dataclass(frozen=True)
class Thresholds:
    """Pass/fail limits. A scenario passes when every figure is within its limit.

    collisions: the share of positions whose encoding equals the previous position's.
    angle_error: max angle error in radians. The float32 floor is about 5e-4 at 8192 positions
        (dim 128, base 10000); 1e-3 leaves room for one more float32 rounding.
    output_error: max abs error of the rotary outputs divided by the largest reference value;
        2**-6 is a few bf16 roundings of the result, far below what a wrong angle does (order 1).
    alibi_distinct: distinct bias values required among the 64 keys nearest the diagonal of the
        last query row (worst head); capped at the number of keys.
    alibi_relative_error: max error of bias minus bias[diagonal] over those keys. 0.25 is one bf16
        ulp for values in [32, 64): the relative bias of the nearest keys (|slope * (k - q)| < 64
        for slopes up to 1) rounded once to bf16 (<= 0.125), plus its slope rounded to bf16
        (<= 63 * 2**-9). Absolute-position biases are off by 1.5 (fp16) to 10+ (bf16).
    """

    collisions: float = 0.0
    angle_error: float = 1e-3
    output_error: float = 2.0**-6
    alibi_distinct: int = ALIBI_NEAREST
    alibi_relative_error: float = 0.25


@dataclass
class ScenarioResult:
    name: str
    output_dtypes: Tuple[str, ...] = ()
    output_devices: Tuple[str, ...] = ()
    max_abs_error: Optional[float] = None
    relative_output_error: Optional[float] = None
    # rotary
    max_angle_error: Optional[float] = None
    angle_error_by_position: Optional[torch.Tensor] = None
    collisions: Optional[float] = None
    # alibi
    distinct_nearest: Optional[int] = None
    relative_bias_error: Optional[float] = None
    error: Optional[str] = None
    failures: List[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class VerifyResult:
    kind: str
    seq_len: int
    thresholds: Thresholds
    scenarios: Dict[str, ScenarioResult]
    # What a reader needs to judge the figures: dtypes the code hard-codes, which the reference
    # keeps; constructor arguments that hide a code path.
    notes: List[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.scenarios.values())

    def __getitem__(self, name: str) -> ScenarioResult:
        return self.scenarios[name]

    def format_table(self) -> str:
        if self.kind == "alibi":
            headers = ["scenario", "output dtypes", "max abs err", f"distinct/{ALIBI_NEAREST}",
                       "rel-to-diag err", "result"]
            rows = [
                [s.name, _dtypes(s), _num(s.max_abs_error), _int(s.distinct_nearest),
                 _num(s.relative_bias_error), _verdict(s)]
                for s in self.scenarios.values()
            ]
        else:
            headers = ["scenario", "output dtypes", "max abs err", "angle err (rad)",
                       "collisions", "result"]
            rows = [
                [s.name, _dtypes(s), _num(s.max_abs_error), _num(s.max_angle_error),
                 _pct(s.collisions), _verdict(s)]
                for s in self.scenarios.values()
            ]
        widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
                 for r in [headers, ["-" * w for w in widths], *rows]]
        for s in self.scenarios.values():
            lines.extend(f"{s.name}: {reason}" for reason in s.failures)
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)


def _dtypes(s: ScenarioResult) -> str:
    return ",".join(d.replace("torch.", "") for d in s.output_dtypes) or "-"


def _num(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _int(x: Optional[int]) -> str:
    return "n/a" if x is None else str(x)


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _verdict(s: ScenarioResult) -> str:
    return "error" if s.error else ("pass" if s.passed else "FAIL")


# --------------------------------------------------------------------------- running


@dataclass
class _Target:
    build: Callable[[], nn.Module]  # a fresh float32 module each call
    make_inputs: Callable[[torch.dtype], Sequence[Any]]
    options: Dict[str, Any]


def _seeded(fn: Callable, *args):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn(*args)


def _check_factory_result(result: Any, where: str) -> Tuple[nn.Module, Callable, Dict[str, Any]]:
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise VerifyError(f"{where} must return (module, make_inputs) or (module, make_inputs, options)")
    module, make_inputs = result[0], result[1]
    options = result[2] if len(result) == 3 else {}
    if not isinstance(module, nn.Module):
        raise VerifyError(f"{where} returned {type(module).__name__} where an nn.Module was expected")
    if not callable(make_inputs):
        raise VerifyError(f"{where}: make_inputs is not callable")
    if not isinstance(options, dict):
        raise VerifyError(f"{where}: options must be a dict, got {type(options).__name__}")
    return module, make_inputs, options


def _target(module_or_factory: Any, make_inputs: Optional[Callable], seq_len: int) -> _Target:
    if isinstance(module_or_factory, nn.Module):
        if make_inputs is None:
            raise VerifyError("make_inputs is required when a module is given instead of a factory")
        template = module_or_factory
        return _Target(lambda: copy.deepcopy(template), make_inputs, {})
    if not callable(module_or_factory):
        raise VerifyError("expected an nn.Module or a factory function")
    factory = module_or_factory
    where = getattr(factory, "__name__", "factory")

    def call():
        try:
            return _check_factory_result(_seeded(factory, seq_len), where)
        except VerifyError:
            raise
        except Exception as exc:
            raise VerifyError(f"{where}({seq_len}) raised {type(exc).__name__}: {exc}") from exc

    _, first_inputs, options = call()
    # Every run gets a fresh module from the factory.
    return _Target(lambda: call()[0], make_inputs or first_inputs, options)


def _flatten(out: Any) -> List[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _flatten(v)]
    if isinstance(out, (tuple, list)):
        return [t for v in out for t in _flatten(v)]
    return []


def _to64(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return t.to(torch.complex128)
    return t.to(torch.float64)


def _inputs(target: _Target, dtype: torch.dtype) -> tuple:
    return tuple(_seeded(target.make_inputs, dtype))


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@dataclass
class _Run:
    outputs: List[torch.Tensor]
    angles: List[torch.Tensor]
    kept: Tuple[str, ...] = ()


@contextlib.contextmanager
def _lifted_set_default_dtype():
    """Make torch.set_default_dtype(bf16/fp16) set float64 (model loaders call it while building).

    float32 is left as it is: it is what code restores after building.
    """
    original = torch.set_default_dtype

    def lifted(dtype):
        original(torch.float64 if dtype in (torch.bfloat16, torch.float16) else dtype)

    torch.set_default_dtype = lifted
    try:
        yield
    finally:
        torch.set_default_dtype = original


def _lift_inputs(inputs: tuple) -> tuple:
    return tuple(_to64(a) if isinstance(a, torch.Tensor) and (a.is_floating_point() or a.is_complex()) else a
                 for a in inputs)


def _same_inputs(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dtype == y.dtype
                    and x.shape == y.shape and torch.equal(x, y)):
                return False
        elif x != y:
            return False
    return True


def _reference(target: _Target, ref_inputs: tuple) -> _Run:
    """The same code in float64: module converted, inputs lifted, float32 requests lifted.

    Requests for bfloat16/float16 written into the forward code (`.bfloat16()` on the slopes,
    `dtype=torch.float16`) are kept: they are the model's own definition, which checkpoints may
    have been trained with, so the reference is what the code computes in float32 with its
    16-bit parts as written, and they are listed in the report. The module is built under the
    lifting mode too, with a low default dtype set by the constructor lifted (loaders set it, the
    model does not); `module.double()` then makes every floating buffer float64 (rather than
    `module.to(torch.float64)`, which would cast complex buffers such as freqs_cis to real).
    """
    with _default_dtype(torch.get_default_dtype()), _lifted_set_default_dtype():
        with RunMode(lift=True, capture=False):
            module = target.build()
        module = module.double()
        mode = RunMode(lift=True, keep_low=True)
        with torch.no_grad(), _default_dtype(torch.float64), mode:
            out = module(*ref_inputs)
    return _Run(_flatten(out), mode.angles, tuple(mode.kept))


_SCENARIO_SETUP = {
    # name: (module dtype, input dtype, autocast?, emulate CUDA's list?, default dtype, TF32 matmuls?)
    "bf16": (torch.bfloat16, torch.bfloat16, False, False, None, False),
    "fp16": (torch.float16, torch.float16, False, False, None, False),
    "autocast-cpu": (None, torch.float32, True, False, None, False),
    "autocast-cuda-emulated": (None, torch.float32, True, True, None, False),
    # built and run under torch.set_default_dtype(torch.bfloat16), as loaders and "bf16-true"
    # training do: what is not given a dtype explicitly is bfloat16.
    "bf16-default": (None, torch.bfloat16, False, False, torch.bfloat16, False),
    # float32 module and inputs; every float32 GEMM rounds its inputs to TF32, at construction too.
    "tf32-emulated": (None, torch.float32, False, False, None, True),
    "fp32": (None, torch.float32, False, False, None, False),
}


def _scenario(target: _Target, name: str, inputs: tuple) -> _Run:
    module_dtype, _, autocast, emulate, default, tf32 = _SCENARIO_SETUP[name]
    tf32_mode = Tf32Matmuls() if tf32 else contextlib.nullcontext()
    with _default_dtype(default or torch.get_default_dtype()), tf32_mode:
        module = target.build()
        if module_dtype is not None:
            module = module.to(module_dtype)
        mode = RunMode(emulate_cuda=emulate)
        amp = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
        with torch.no_grad(), amp, mode:
            out = module(*inputs)
    return _Run(_flatten(out), mode.angles)


def _run_all(
    target: _Target,
    scenarios: Iterable[str],
    measure: Callable[[ScenarioResult, _Run, _Run], None],
    original: Optional[_Target] = None,
    notes: Optional[List[str]] = None,
) -> Dict[str, ScenarioResult]:
    names = list(scenarios)
    unknown = [n for n in names if n not in _SCENARIO_SETUP]
    if unknown:
        raise VerifyError(f"unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS + EXTRA_SCENARIOS)}")
    inputs_by_dtype: Dict[torch.dtype, tuple] = {}
    # One float64 run per distinct set of lifted inputs: inputs that are equal in every dtype
    # (zeros, small integers) share one reference.
    references: List[Tuple[tuple, _Run]] = []
    results: Dict[str, ScenarioResult] = {}
    for name in names:
        input_dtype = _SCENARIO_SETUP[name][1]
        result = ScenarioResult(name)
        results[name] = result
        try:
            if input_dtype not in inputs_by_dtype:
                inputs_by_dtype[input_dtype] = _inputs(target, input_dtype)
            inputs = inputs_by_dtype[input_dtype]
            lifted = _lift_inputs(inputs)
            ref = next((r for key, r in references if _same_inputs(key, lifted)), None)
            if ref is None:
                ref = _reference(target, lifted)
                references.append((lifted, ref))
            run = _scenario(target, name, inputs)
        except VerifyError:
            raise
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
            result.failures.append(f"raised {result.error}")
            continue
        result.output_dtypes = tuple(str(t.dtype) for t in run.outputs)
        result.output_devices = tuple(str(t.device) for t in run.outputs)
        if original is not None:
            _compare_with_original(result, original, name, inputs)
        for line in ref.kept:
            note = f"the reference keeps the 16-bit dtype the code hard-codes at {line}"
            if notes is not None and note not in notes:
                notes.append(note)
        if len(run.outputs) != len(ref.outputs) or any(
            o.shape != r.shape for o, r in zip(run.outputs, ref.outputs)
        ):
            raise VerifyError(
                f"scenario {name}: output shapes {[tuple(o.shape) for o in run.outputs]} differ from "
                f"the float64 reference's {[tuple(r.shape) for r in ref.outputs]}"
            )
        if not run.outputs:
            raise VerifyError("the module returned no tensors")
        _output_error(result, run, ref)
        measure(result, run, ref)
    return results


def _compare_with_original(result: ScenarioResult, original: _Target, name: str, inputs: tuple) -> None:
    """The original module in the same scenario: a fix must hand out the same dtypes and devices."""
    try:
        run = _scenario(original, name, inputs)
    except Exception as exc:
        result.failures.append(f"the original module raised {type(exc).__name__}: {exc}")
        return
    dtypes = tuple(str(t.dtype) for t in run.outputs)
    devices = tuple(str(t.device) for t in run.outputs)
    if dtypes != result.output_dtypes:
        result.failures.append(f"output dtypes {_short(result.output_dtypes)} differ from the original's "
                               f"{_short(dtypes)}")
    if devices != result.output_devices:
        result.failures.append(f"output devices {_short(result.output_devices)} differ from the original's "
                               f"{_short(devices)}")


def _short(names: Tuple[str, ...]) -> str:
    return ",".join(n.replace("torch.", "") for n in names) or "-"


def _output_error(result: ScenarioResult, run: _Run, ref: _Run) -> None:
    """Max abs error where the reference is finite (masks hold -inf); a NaN output counts as inf."""
    worst, scale = 0.0, 0.0
    for o, r in zip(run.outputs, ref.outputs):
        if r.numel() == 0:
            continue
        r64 = _to64(r)
        err = (_to64(o) - r64).abs()
        mag = r64.abs()
        largest = float(mag.max())
        if not math.isfinite(largest):  # masks hold -inf: compare where the reference is finite
            finite = torch.isfinite(r64)
            err.masked_fill_(~finite, 0.0)
            largest = float(mag.masked_fill_(~finite, 0.0).max())
        e = float(err.max())  # NaN propagates through max
        worst = max(worst, math.inf if math.isnan(e) else e)
        scale = max(scale, largest)
    result.max_abs_error = worst
    result.relative_output_error = worst / scale if scale > 0 else worst


# --------------------------------------------------------------------------- rotary


def _position_axis(options: Dict[str, Any], override: Optional[int]) -> int:
    return override if override is not None else int(options.get("position_axis", -2))


def _rows(t: torch.Tensor, axis: int) -> torch.Tensor:
    rows = t.movedim(axis, 0).reshape(t.shape[axis], -1)
    return torch.view_as_real(rows).reshape(rows.shape[0], -1) if rows.is_complex() else rows


def _collisions(outputs: List[torch.Tensor], axis: int, seq_len: int) -> float:
    parts = [o for o in outputs if o.dim() > 0 and -o.dim() <= axis < o.dim() and o.shape[axis] == seq_len]
    if not parts:
        raise VerifyError(
            f"no output has {seq_len} positions along axis {axis}; "
            "set options['position_axis'] in the factory"
        )
    rows = torch.cat([_rows(o, axis).to(torch.float64) for o in parts], dim=1)
    if rows.shape[0] < 2:
        return 0.0
    same = (rows[1:] == rows[:-1]).all(dim=1)
    return float(same.double().mean())


def _angle_axis(shape: torch.Size, axis: int, seq_len: int) -> Optional[int]:
    if -len(shape) <= axis < len(shape) and shape[axis] == seq_len:
        return axis
    matches = [i for i, n in enumerate(shape) if n == seq_len]
    return matches[-1] if matches else None


def _angles(result: ScenarioResult, run: _Run, ref: _Run, axis: int, seq_len: int) -> None:
    pairs = pair_by_order_and_shape(run.angles, ref.angles)
    if not pairs:
        return
    worst = 0.0
    by_position = None
    for got, want in pairs:
        err = wrapped_angle_error(got, want)
        if err.numel() == 0:
            continue
        worst = max(worst, float(err.max()))
        a = _angle_axis(err.shape, axis, seq_len)
        if a is not None:
            per = err.movedim(a, 0).reshape(seq_len, -1).amax(dim=1)
            by_position = per if by_position is None else torch.maximum(by_position, per)
    result.max_angle_error = worst
    result.angle_error_by_position = by_position


def _verify_rotary(target: _Target, seq_len: int, scenarios: Iterable[str], th: Thresholds,
                   position_axis: Optional[int], original: Optional[_Target] = None) -> VerifyResult:
    axis = _position_axis(target.options, position_axis)
    def measure(result: ScenarioResult, run: _Run, ref: _Run) -> None:
        result.collisions = _collisions(run.outputs, axis, seq_len)
        _angles(result, run, ref, axis, seq_len)
        if result.collisions > th.collisions:
            result.failures.append(
                f"{100 * result.collisions:.1f}% of positions repeat the previous encoding "
                f"(limit {100 * th.collisions:.1f}%)"
            )
        if result.max_angle_error is not None and result.max_angle_error > th.angle_error:
            result.failures.append(
                f"angle error {result.max_angle_error:.3g} rad > {th.angle_error:.3g} rad"
            )
        if result.relative_output_error > th.output_error:
            result.failures.append(
                f"max abs output error {result.max_abs_error:.3g} = {result.relative_output_error:.3g} "
                f"x the largest reference value (limit {th.output_error:.3g} x)"
            )

    notes = list(target.options.get("notes", ()))
    return VerifyResult("rotary", seq_len, th, _run_all(target, scenarios, measure, original, notes), notes)


def verify_rotary(
    module_or_factory: Any,
    make_inputs: Optional[Callable[[torch.dtype], Sequence[Any]]] = None,
    *,
    seq_len: int = DEFAULT_SEQ_LEN,
    scenarios: Iterable[str] = SCENARIOS,
    thresholds: Optional[Thresholds] = None,
    position_axis: Optional[int] = None,
    original: Any = None,
) -> VerifyResult:
    """Measure a rotary module (outputs: cos/sin, freqs_cis, or rotated q/k) in every scenario.

    `module_or_factory` is a factory following the poslint factory protocol, or an nn.Module
    together with `make_inputs(dtype)`. Positions run along `position_axis` (default: the
    factory's options['position_axis'], else -2). `original` (a factory or module, run with the
    same inputs) is the code before a fix: a scenario whose output dtypes or devices differ from
    the original's fails.
    """
    target = _target(module_or_factory, make_inputs, seq_len)
    return _verify_rotary(target, seq_len, scenarios, thresholds or Thresholds(), position_axis,
                          _original(original, target, seq_len))


# --------------------------------------------------------------------------- alibi


def _last_row(bias: torch.Tensor) -> torch.Tensor:
    """Bias [..., Lq, Lk] or [..., 1, Lk] -> [heads, Lk] for the last query row."""
    if bias.dim() >= 2:
        bias = bias[..., -1, :]
    return bias.reshape(-1, bias.shape[-1])


def _verify_alibi(target: _Target, seq_len: int, scenarios: Iterable[str], th: Thresholds,
                  original: Optional[_Target] = None) -> VerifyResult:
    def measure(result: ScenarioResult, run: _Run, ref: _Run) -> None:
        got, want = _last_row(run.outputs[0]), _last_row(ref.outputs[0])
        n = min(ALIBI_NEAREST, got.shape[-1])
        near_got, near_want = got[:, -n:].to(torch.float64), want[:, -n:].to(torch.float64)
        result.distinct_nearest = min(int(torch.unique(row).numel()) for row in near_got)
        rel_got = near_got - near_got[:, -1:]
        rel_want = near_want - near_want[:, -1:]
        err = (rel_got - rel_want).abs()
        result.relative_bias_error = float(torch.nan_to_num(err, nan=math.inf).max())
        needed = min(th.alibi_distinct, n)
        if result.distinct_nearest < needed:
            result.failures.append(
                f"{result.distinct_nearest} distinct values among the {n} keys nearest the "
                f"diagonal (need {needed})"
            )
        if result.relative_bias_error > th.alibi_relative_error:
            result.failures.append(
                f"bias relative to the diagonal is off by {result.relative_bias_error:.3g} "
                f"(limit {th.alibi_relative_error:.3g})"
            )

    notes = list(target.options.get("notes", ()))
    return VerifyResult("alibi", seq_len, th, _run_all(target, scenarios, measure, original, notes), notes)


def verify_alibi(
    module_or_factory: Any,
    make_inputs: Optional[Callable[[torch.dtype], Sequence[Any]]] = None,
    *,
    seq_len: int = DEFAULT_SEQ_LEN,
    scenarios: Iterable[str] = SCENARIOS,
    thresholds: Optional[Thresholds] = None,
    original: Any = None,
) -> VerifyResult:
    """Measure an ALiBi bias module (first output: bias [..., Lq, Lk] or [..., 1, Lk]).

    The last query row is taken; its diagonal is the last key.
    """
    target = _target(module_or_factory, make_inputs, seq_len)
    return _verify_alibi(target, seq_len, scenarios, thresholds or Thresholds(), _original(original, target, seq_len))


def verify(
    module_or_factory: Any,
    make_inputs: Optional[Callable[[torch.dtype], Sequence[Any]]] = None,
    *,
    seq_len: int = DEFAULT_SEQ_LEN,
    scenarios: Iterable[str] = SCENARIOS,
    thresholds: Optional[Thresholds] = None,
    original: Any = None,
) -> VerifyResult:
    """verify_rotary or verify_alibi, chosen by the factory's options['kind'] (default rotary)."""
    target = _target(module_or_factory, make_inputs, seq_len)
    kind = target.options.get("kind", "rotary")
    th = thresholds or Thresholds()
    before = _original(original, target, seq_len)
    if kind == "alibi":
        return _verify_alibi(target, seq_len, scenarios, th, before)
    if kind != "rotary":
        raise VerifyError(f"options['kind'] must be 'rotary' or 'alibi', got {kind!r}")
    return _verify_rotary(target, seq_len, scenarios, th, None, before)


def _original(original: Any, target: _Target, seq_len: int) -> Optional[_Target]:
    """The code before a fix, run on the target's inputs."""
    return None if original is None else _target(original, target.make_inputs, seq_len)
