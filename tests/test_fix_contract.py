"""Fixes keep the code's contract on whole (small, self-written) models: the positional part is
computed in float32, and what leaves it (cos/sin, the bias, the cache) keeps the original's dtype
and device; float32 outputs are unchanged; a site that cannot be made exact is not fixed.

Each model in tests/runtime_models/contract_*.py reproduces one failure that `--fix` caused on
real models (issue 14)."""

from __future__ import annotations

import importlib.util
import shutil
import uuid
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from torch import nn

from poslint.edge.cli import main
from poslint.runtime import verify_rotary

MODELS = Path(__file__).parent / "runtime_models"


@pytest.fixture(autouse=True)
def one_thread():
    """A threaded matmul may sum in another order from one call to the next (seen under load):
    one thread makes the float32 comparisons of whole blocks exact."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"contract_{uuid.uuid4().hex}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fixed(name: str, tmp_path: Path):
    copy = tmp_path / name
    shutil.copy(MODELS / name, copy)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes", "-q", str(copy)])
    return _load(MODELS / name), _load(copy), copy.read_text(encoding="utf-8"), result


class Block(nn.Module):
    """The rest of a model: a bf16/fp16 projection rotated with cos/sin, then another projection."""

    def __init__(self, rotary, dim):
        super().__init__()
        self.rotary = rotary
        self.q = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        cos, sin = self.rotary(x.shape[-2]) if not _takes_tensor(self.rotary) else self.rotary(x)
        if cos.shape[-1] * 2 == x.shape[-1]:  # one angle per pair of channels
            cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
        q = self.q(x)
        half = q.shape[-1] // 2
        rotated = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
        return self.out(q * cos + rotated * sin)


def _takes_tensor(rotary):
    return type(rotary).__name__ != "TableRotary"


@pytest.mark.parametrize("name, cls", [("contract_uncast_cos_sin.py", "TableRotary"),
                                       ("contract_type_as_device.py", "MovedRotary"),
                                       ("contract_prealloc_table.py", "FilledRotary")])
def test_rotary_fix_keeps_dtypes_and_float32_outputs_in_a_whole_block(name, cls, tmp_path):
    original, fixed, text, _ = _fixed(name, tmp_path)
    assert text != (MODELS / name).read_text(encoding="utf-8")
    dim, n = 64, 1024
    x = torch.randn(1, n, dim, generator=torch.Generator().manual_seed(0))
    outputs = {}
    for label, module in (("original", original), ("fixed", fixed)):
        torch.manual_seed(0)
        block = Block(getattr(module, cls)(dim), dim)
        outputs[label] = block(x)
        for dtype in (torch.bfloat16, torch.float16):
            low = Block(getattr(module, cls)(dim), dim).to(dtype)
            low.load_state_dict(block.state_dict())
            assert low(x.to(dtype)).dtype == dtype  # the fixed rotary hands the block its own dtype
    assert torch.equal(outputs["original"], outputs["fixed"])  # float32 values unchanged


@pytest.mark.parametrize("name, cls", [("contract_uncast_cos_sin.py", "TableRotary"),
                                       ("contract_prealloc_table.py", "FilledRotary")])
def test_rotary_fix_passes_verify_against_the_original(name, cls, tmp_path):
    original, fixed, _, _ = _fixed(name, tmp_path)
    if cls == "TableRotary":
        make = lambda dtype: (torch.zeros(1, 4096, 64, dtype=dtype),)  # noqa: E731

        class ByTensor(nn.Module):
            def __init__(self, rotary):
                super().__init__()
                self.rotary = rotary

            def forward(self, x):
                return self.rotary(x.shape[-2])

        build = lambda module: ByTensor(getattr(module, cls)(64))  # noqa: E731
    else:
        make = lambda dtype: (torch.zeros(1, 4096, 64, dtype=dtype),)  # noqa: E731
        build = lambda module: getattr(module, cls)(64)  # noqa: E731
    before = verify_rotary(build(original), make, seq_len=4096, scenarios=["bf16"])
    after = verify_rotary(build(fixed), make, seq_len=4096, original=build(original))
    assert not before.passed
    assert after.passed, after.format_table()


def test_type_as_fix_keeps_the_device_move(tmp_path):
    original, fixed, text, _ = _fixed("contract_type_as_device.py", tmp_path)
    assert ".to(device=self.inv_freq.device, dtype=torch.float32)" in text
    for module in (original, fixed):
        with torch.device("meta"):
            rotary = module.MovedRotary(64)
        cos, sin = rotary(torch.empty(1, 128, 64, device="meta"))
        assert cos.device.type == "meta" and sin.device.type == "meta"


def test_caller_dtype_is_honoured_for_the_output(tmp_path):
    original, fixed, text, _ = _fixed("contract_caller_dtype.py", tmp_path)
    assert text != (MODELS / "contract_caller_dtype.py").read_text(encoding="utf-8")
    weight = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        before = original.grid_sincos(48, 48, 64, dtype)
        after = fixed.grid_sincos(48, 48, 64, dtype)
        assert after.dtype == before.dtype == dtype
        after @ weight.to(dtype)  # meets weights of the caller's dtype
        if dtype == torch.float32:
            assert torch.equal(before, after)
    # bf16: exact positions now; the rows for positions 40 and 41 no longer coincide.
    fixed_bf16 = fixed.grid_sincos(48, 48, 64, torch.bfloat16).float()
    reference = fixed.grid_sincos(48, 48, 64, torch.float32)
    original_bf16 = original.grid_sincos(48, 48, 64, torch.bfloat16).float()
    assert (fixed_bf16 - reference).abs().max() <= (original_bf16 - reference).abs().max()


@pytest.mark.parametrize("name", ["contract_alibi_broadcast.py", "contract_alibi_bf16_slopes.py"])
def test_alibi_sites_without_an_exact_dtype_keeping_fix_are_left_alone(name, tmp_path):
    _, _, text, result = _fixed(name, tmp_path)
    # A float32 bias would meet bf16 scores in baddbmm; float32 slopes would change the float32
    # outputs the checkpoints were trained with, and leave the absolute bias's 16-bit cast.
    assert text == (MODELS / name).read_text(encoding="utf-8")
    assert result.exit_code == 1 and "POS201" in result.output and "[*]" not in result.output



def test_matrix_product_with_positions_in_the_buffer_dtype_gets_no_frequency_fix(tmp_path):
    original, fixed, text, result = _fixed("contract_matmul_buffer_dtype.py", tmp_path)
    # A float32 copy of inv_freq beside positions in its converted dtype would make the `@` raise
    # in a bf16 model: POS102 is reported with no fix, and so are POS101 and POS103.
    assert {"POS101", "POS102", "POS103"} <= set(result.output.split()) and "[*]" not in result.output
    assert text == (MODELS / "contract_matmul_buffer_dtype.py").read_text(encoding="utf-8")
    ids = torch.arange(512)[None]
    for module in (original, fixed):
        angles = module.ReturnedAngles(64).to(torch.bfloat16)(ids)
        assert angles.dtype == torch.bfloat16


def test_positions_whose_dtype_the_cos_sin_follow_out_get_no_fix(tmp_path):
    original, fixed, text, result = _fixed("contract_cos_sin_follow_positions.py", tmp_path)
    # `emb.to(t)` casts the features to the guidance's dtype: float32 guidance would make them
    # float32, which the bf16 projection refuses. POS101 is reported with no fix.
    assert "POS101" in result.output and "[*]" not in result.output
    assert text == (MODELS / "contract_cos_sin_follow_positions.py").read_text(encoding="utf-8")
    model = original.Guided().to(torch.bfloat16)
    x = torch.randn(2, 32, dtype=torch.bfloat16)
    assert original.denoise(model, x).dtype == torch.bfloat16
    with pytest.raises(RuntimeError):
        model(x, torch.full((2,), 3.5))  # what the float32 edit would hand it


def test_a_layer_called_on_coordinates_gets_no_fix(tmp_path):
    original, fixed, text, result = _fixed("contract_linear_coordinates.py", tmp_path)
    assert {"POS101", "POS103"} <= set(result.output.split()) and "[*]" not in result.output
    assert text == (MODELS / "contract_linear_coordinates.py").read_text(encoding="utf-8")
    tokens, coords = torch.zeros(4, 32, dtype=torch.bfloat16), torch.rand(4, 2) * 30
    assert original.CoordinateFeatures().to(torch.bfloat16)(tokens, coords).dtype == torch.bfloat16
    with pytest.raises(RuntimeError):  # what float32 coordinates do beside the converted weight
        original.Float32CoordinateFeatures().to(torch.bfloat16)(tokens, coords)
