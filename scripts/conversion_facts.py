"""Measure what whole-module conversions do to the tensors a module holds, and write the table
into docs/precision.md between the markers below.

Measured, not assumed: ``module.to(torch.bfloat16)``, ``.half()`` and ``.bfloat16()`` on
complex, float32 and integer buffers and on plain tensor attributes, and an emulation, on one
CPU process, of the buffer cast of sharded mixed precision (FSDP's
``MixedPrecision(buffer_dtype=...)`` casts each floating-point buffer; DeepSpeed's 16-bit engines
call ``module.half()``/``module.bfloat16()``, the rows above it), and what a module's forward sees
under FSDP2's ``fully_shard`` with a ``MixedPrecisionPolicy`` (run on one CPU process with gloo):
its buffers, its parameters and its arguments.

    python scripts/conversion_facts.py          # print the table
    python scripts/conversion_facts.py --write  # rewrite it in docs/precision.md
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch

BEGIN = "<!-- conversion-facts: begin (scripts/conversion_facts.py) -->"
END = "<!-- conversion-facts: end -->"
DOC = Path(__file__).resolve().parent.parent / "docs" / "precision.md"


class Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        angles = torch.arange(4, dtype=torch.float32) / 3
        self.register_buffer("complex_rotation", torch.polar(torch.ones(4), angles))
        self.register_buffer("frequencies", angles.clone())
        self.register_buffer("positions", torch.arange(4))
        self.plain = angles.clone()


def _mixed_precision_buffers(module: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """The buffer cast of sharded mixed precision, emulated: every floating-point buffer to ``dtype``."""
    for name, buffer in module.named_buffers():
        if buffer.is_floating_point():
            module.register_buffer(name, buffer.to(dtype))
    return module


CONVERSIONS = {
    "module.to(torch.bfloat16)": lambda m: m.to(torch.bfloat16),
    "module.half()": lambda m: m.half(),
    "module.bfloat16()": lambda m: m.bfloat16(),
    "sharded mixed precision, buffer_dtype=bf16 (emulated)": lambda m: _mixed_precision_buffers(m, torch.bfloat16),
}


def _describe(t: torch.Tensor, original: torch.Tensor) -> str:
    if t.is_complex():
        kept = torch.equal(t, original.to(t.dtype))
        return f"{t.dtype} ({'values kept' if kept else 'rounded'})"
    if original.is_complex():
        return f"{t.dtype}: the imaginary part (sin) is dropped"
    return f"{t.dtype}" + ("" if t.dtype == original.dtype else " (rounded)")


def table() -> str:
    rows = ["| conversion | complex buffer | float32 buffer | int64 buffer | plain attribute |",
            "|---|---|---|---|---|"]
    for name, convert in CONVERSIONS.items():
        original = Holder()
        module = Holder()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # casting complex to real warns
            convert(module)
        cells = [_describe(getattr(module, attr), getattr(original, attr))
                 for attr in ("complex_rotation", "frequencies", "positions", "plain")]
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    rows.append(_fsdp2_row())
    tensor = torch.polar(torch.ones(2), torch.tensor([0.5, 1.0]))
    rows.append("")
    rows.append(f"On a complex tensor itself, `.half()` gives {tensor.half().dtype} and `.bfloat16()` "
                f"gives {tensor.bfloat16().dtype} (torch {torch.__version__.split('+')[0]}).")
    rows.append("")
    rows.append(_fsdp2_inputs())
    return "\n".join(rows)


class _Probe(Holder):
    """Records, inside its forward, the dtypes it holds and the arguments it gets."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))
        self.seen = {}

    def forward(self, coordinates, ids):
        self.seen = {"argument": coordinates.clone(), "ids": ids.dtype, "weight": self.weight.dtype,
                     **{attr: getattr(self, attr).clone() for attr in ("complex_rotation", "frequencies", "positions", "plain")}}
        return coordinates


def _sharded_forward(policy_kwargs: dict) -> dict:
    """What a module's forward sees under FSDP2 (``fully_shard``) with a MixedPrecisionPolicy, on one
    CPU process (gloo); the process group is torn down again."""
    import tempfile

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group("gloo", init_method=f"file://{folder}/store", rank=0, world_size=1)
        try:
            probe = _Probe()
            fully_shard(probe, mesh=init_device_mesh("cpu", (1,)), mp_policy=MixedPrecisionPolicy(**policy_kwargs))
            probe(torch.arange(8190, 8193, dtype=torch.float32), torch.arange(3))
            return probe.seen
        finally:
            dist.destroy_process_group()


def _fsdp2_row() -> str:
    seen, original = _sharded_forward({"param_dtype": torch.bfloat16}), Holder()
    cells = [_describe(seen[attr], getattr(original, attr))
             for attr in ("complex_rotation", "frequencies", "positions", "plain")]
    return "| `fully_shard(module, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))`, in forward | " \
        + " | ".join(cells) + " |"


def _fsdp2_inputs() -> str:
    cast = _sharded_forward({"param_dtype": torch.bfloat16})
    kept = _sharded_forward({"param_dtype": torch.bfloat16, "cast_forward_inputs": False})
    values = ", ".join(f"{v:g}" for v in cast["argument"].float().tolist())
    return (f"FSDP2 leaves buffers as they are but casts the forward's arguments: under that policy the "
            f"parameters arrive as {cast['weight']}, a float32 argument holding 8190, 8191 and 8192 arrives as "
            f"{cast['argument'].dtype} ({values}), an int64 argument as {cast['ids']}; with "
            f"`cast_forward_inputs=False` the float32 argument stays {kept['argument'].dtype}.")


def write_doc(path: Path = DOC) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END)
    path.write_text(text[:start] + f"{BEGIN}\n{table()}\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write_doc()
    else:
        print(table())
