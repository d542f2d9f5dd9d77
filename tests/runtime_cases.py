"""Registry of models that `poslint.runtime` runs in CI. Adding a model takes one line.

Each file defines `poslint_factory(seq_len=8192)` (see docs/verify.md for the protocol).

expect="collide": each scenario in `where` (default bf16) shows the bug's signature: rotary, at
    least 80% of positions repeat the previous encoding; ALiBi, at most 5 distinct values among
    the 64 keys nearest the diagonal.
expect="fail": each scenario in `where` fails its thresholds.
expect="pass": every scenario passes. A `<style>__fixed.py` case must also keep the output dtypes
    of its registered buggy twin `<style>.py` in every scenario.

ALiBi models that return the full [heads, L, L] bias run at 2048 positions: at 8192 the float64
reference alone is 4 GiB. They still fail in bf16 there, but with more than 5 distinct values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

ROPE = "tests/fixtures/rope/checker/"
ALIBI = "tests/fixtures/alibi/checker/"
MODELS = "tests/runtime_models/"

BF16 = ("bf16",)
HALF = ("bf16", "fp16")
AUTOCAST = ("autocast-cpu", "autocast-cuda-emulated")
CUDA = ("autocast-cuda-emulated",)
FULL_BIAS = 2048


@dataclass(frozen=True)
class Case:
    path: str
    kind: str  # "rotary" | "alibi"
    expect: str  # "collide" | "fail" | "pass"
    where: Tuple[str, ...] = BF16
    seq_len: int = 8192

    @property
    def id(self) -> str:
        return self.path.rsplit("/", 1)[-1][: -len(".py")]


CASES = [
    # our own models (tests/runtime_models)
    Case(MODELS + "llama_old.py", kind="rotary", expect="collide", where=BF16 + CUDA),
    Case(MODELS + "llama_old__fixed.py", kind="rotary", expect="pass"),
    Case(MODELS + "llama_matmul.py", kind="rotary", expect="collide", where=AUTOCAST),
    Case(MODELS + "llama_matmul__fixed.py", kind="rotary", expect="pass"),
    Case(MODELS + "alibi_bloom.py", kind="alibi", expect="collide"),
    Case(MODELS + "alibi_bloom__fixed.py", kind="alibi", expect="pass"),
]
