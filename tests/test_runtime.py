"""poslint.runtime: figures, float64 reference lifting, CUDA autocast emulation, loading."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

from poslint.runtime import SCENARIOS, Thresholds, VerifyError, load_factory, verify_alibi, verify_rotary
from poslint.runtime.modes import RunMode, cpu_autocast_state

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "runtime_models"


def factory(name: str):
    return load_factory(f"{MODELS / name}.py:poslint_factory")


# --------------------------------------------------------------------------- figures


def test_old_llama_collides_like_the_published_finding():
    result = verify_rotary(factory("llama_old"))
    # 897 distinct bf16 positions of 8192 (PRECISION.md section 1): 7295 of 8191 repeat.
    assert result["bf16"].collisions == pytest.approx(7295 / 8191)
    assert result["fp16"].collisions == pytest.approx(4095 / 8191)
    assert result["bf16"].max_angle_error == pytest.approx(math.pi, abs=1e-3)
    assert result["autocast-cpu"].passed  # float32 einsum: CPU autocast leaves it alone
    assert result["autocast-cuda-emulated"].collisions == result["bf16"].collisions  # CUDA lowers einsum
    assert result["bf16"].output_dtypes == ("torch.bfloat16", "torch.bfloat16")
    assert result["autocast-cpu"].output_dtypes == ("torch.float32", "torch.float32")
    assert not result.passed


def test_fixed_llama_sits_at_the_float32_floor():
    result = verify_rotary(factory("llama_old__fixed"))
    assert result.passed, result.format_table()
    for s in result.scenarios.values():
        assert s.collisions == 0.0
        assert 1e-4 < s.max_angle_error <= 1e-3  # the float32 floor, ~4.9e-4 at 8192
        assert s.angle_error_by_position.shape == (8192,)


def test_unguarded_matmul_fails_only_under_autocast():
    result = verify_rotary(factory("llama_matmul"), scenarios=["autocast-cpu", "autocast-cuda-emulated"])
    for s in result.scenarios.values():
        assert not s.passed
        assert s.max_angle_error > 1.0


def test_seq_len_is_configurable():
    # Every integer up to 256 is exact in bf16.
    result = verify_rotary(factory("llama_old"), seq_len=256, scenarios=["bf16"])
    assert result.seq_len == 256
    assert result["bf16"].collisions == 0.0


def test_bloom_absolute_alibi_collapses_in_bf16_and_relative_passes():
    buggy = verify_alibi(factory("alibi_bloom"))
    assert buggy["bf16"].distinct_nearest <= 5
    assert buggy["bf16"].relative_bias_error > 10
    assert buggy["autocast-cpu"].passed  # the bias stays float32 with float32 activations
    fixed = verify_alibi(factory("alibi_bloom__fixed"))
    assert fixed.passed, fixed.format_table()
    assert fixed["bf16"].distinct_nearest == 64
    assert 0 < fixed["bf16"].relative_bias_error <= Thresholds().alibi_relative_error


def test_thresholds_are_applied():
    strict = Thresholds(angle_error=1e-6)
    result = verify_rotary(factory("llama_old__fixed"), scenarios=["autocast-cpu"], thresholds=strict)
    assert not result.passed
    assert "angle error" in result["autocast-cpu"].failures[0]


def test_format_table_has_one_row_per_scenario():
    table = verify_rotary(factory("llama_old"), seq_len=4096).format_table()
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["scenario", "output", "dtypes"]
    for name in SCENARIOS:
        assert any(line.split()[0] == name for line in lines[2:6])
    assert "bf16: " in table and "FAIL" in table


# --------------------------------------------------------------------------- API shapes


class PolarRope(nn.Module):
    """freqs_cis computed in forward with torch.polar; positions built in the module dtype."""

    def __init__(self, dim: int = 16):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, x):
        t = torch.arange(x.shape[0], dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq).float()
        return torch.polar(torch.ones_like(freqs), freqs)


def test_module_with_make_inputs_and_polar_capture():
    result = verify_rotary(PolarRope(), lambda dtype: (torch.zeros(4096, dtype=dtype),),
                           seq_len=4096, position_axis=0, scenarios=["bf16", "autocast-cpu"])
    assert result["bf16"].output_dtypes == ("torch.complex64",)
    assert result["bf16"].max_angle_error > 1.0  # captured from torch.polar's angle argument
    assert result["bf16"].collisions > 0.8
    assert result["autocast-cpu"].passed


def test_module_without_make_inputs_is_an_error():
    with pytest.raises(VerifyError, match="make_inputs is required"):
        verify_rotary(PolarRope())


def test_scenario_that_raises_is_reported_not_raised():
    class OnlyFloat32(nn.Module):
        def forward(self, x):
            if x.dtype == torch.float16:
                raise RuntimeError("no half here")
            return torch.arange(x.shape[-2], dtype=torch.float32)[:, None].cos()

    result = verify_rotary(OnlyFloat32(), lambda dtype: (torch.zeros(64, 1, dtype=dtype),), seq_len=64)
    assert result["fp16"].error == "RuntimeError: no half here"
    assert not result["fp16"].passed
    assert result["bf16"].passed
    assert "error" in result.format_table()


@pytest.mark.parametrize(
    "returned, message",
    [
        (nn.Identity(), "must return"),
        (("not a module", lambda d: ()), "nn.Module"),
        ((nn.Identity(), "x"), "not callable"),
        ((nn.Identity(), lambda d: (), ["kind"]), "options must be a dict"),
    ],
)
def test_bad_factory_results_are_clear_errors(returned, message):
    def poslint_factory(seq_len=8192):
        return returned

    with pytest.raises(VerifyError, match=message):
        verify_rotary(poslint_factory)


# --------------------------------------------------------------------------- modes


def test_reference_mode_lifts_hard_coded_low_dtypes():
    x = torch.ones(3)
    with RunMode(lift=True) as mode:
        assert x.half().dtype == torch.float64
        assert x.bfloat16().dtype == torch.float64
        assert x.float().dtype == torch.float64
        assert x.to(torch.bfloat16).dtype == torch.float64
        assert x.to("cpu", torch.float16).dtype == torch.float64
        assert x.to(dtype=torch.float16).dtype == torch.float64
        assert x.type(torch.bfloat16).dtype == torch.float64
        assert x.type("torch.HalfTensor").dtype == torch.float64
        assert torch.arange(5, dtype=torch.bfloat16).dtype == torch.float64
        assert x.to(torch.int64).dtype == torch.int64
        x.cos()
    assert len(mode.angles) == 1


def test_reference_keeps_the_16bit_dtype_the_code_hard_codes_and_says_so():
    class HardCoded(nn.Module):
        def forward(self, x):
            t = torch.arange(x.shape[-2], dtype=torch.bfloat16)
            return (t[:, None] * torch.ones(1, 4)).cos()

    result = verify_rotary(HardCoded(), lambda dtype: (torch.zeros(8192, 1, dtype=dtype),),
                           scenarios=["autocast-cpu"])
    # The collisions are the code's own; the reference computes them too (checkpoints may have
    # been trained with them), so the angles match it, and the report names the line.
    assert result["autocast-cpu"].collisions > 0.8
    assert result["autocast-cpu"].max_angle_error == 0.0
    assert not result.passed
    assert any("hard-codes" in note and "test_runtime.py:" in note and "bfloat16" in note for note in result.notes)
    assert "note: the reference keeps the 16-bit dtype" in result.format_table()


def test_a_fix_that_changes_the_output_dtype_fails_against_the_original():
    class Original(nn.Module):
        def forward(self, x):
            bias = torch.arange(x.shape[-1]).float()[None, None, :] * 0.5
            return bias.to(x.dtype)

    class DroppedCast(nn.Module):
        def forward(self, x):
            return torch.arange(x.shape[-1]).float()[None, None, :] * 0.5

    make = lambda dtype: (torch.zeros(1, 256, dtype=dtype),)  # noqa: E731
    alone = verify_alibi(DroppedCast(), make, seq_len=256, scenarios=["bf16"])
    assert alone.passed, alone.format_table()
    judged = verify_alibi(DroppedCast(), make, seq_len=256, scenarios=["bf16"], original=Original())
    assert not judged.passed
    assert "output dtypes float32 differ from the original's bfloat16" in judged.format_table()
    itself = verify_alibi(Original(), make, seq_len=256, scenarios=["bf16"], original=Original())
    assert not any("original" in failure for failure in itself["bf16"].failures), itself.format_table()


def test_reference_lifts_a_low_default_dtype_set_by_the_factory():
    class Table(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.table = torch.arange(n) * 0.5  # takes the default dtype

        def forward(self, x):
            return self.table[None, :].float()

    def poslint_factory(seq_len=8192):
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            module = Table(seq_len)
        finally:
            torch.set_default_dtype(previous)
        return module, lambda dtype: (torch.zeros(1, dtype=dtype),), {"kind": "alibi"}

    result = verify_alibi(poslint_factory, scenarios=["autocast-cpu"])
    assert result["autocast-cpu"].distinct_nearest <= 5
    assert result["autocast-cpu"].relative_bias_error > 1.0
    assert torch.get_default_dtype() == torch.float32


def test_cuda_emulation_lowers_einsum_only_where_autocast_is_on():
    a = torch.randn(4, 4)
    v = a[0]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        # einsum is not on CPU autocast's list; an outer product does not reach a lowered op inside it.
        assert torch.einsum("i,j->ij", v, v).dtype == torch.float32
        with RunMode(emulate_cuda=True):
            assert torch.einsum("i,j->ij", v, v).dtype == torch.bfloat16
            assert torch.mv(a, a[0]).dtype == torch.bfloat16
            assert torch.linalg.multi_dot([a, a, a]).dtype == torch.bfloat16
            assert torch.outer(a[0], a[0]).dtype == torch.float32  # on no list
            assert torch.einsum("ij,jk->ik", a.double(), a.double()).dtype == torch.float64
            with torch.autocast("cpu", enabled=False):
                assert cpu_autocast_state()[0] is False
                assert torch.einsum("i,j->ij", v, v).dtype == torch.float32
                assert (a @ a).dtype == torch.float32
    with RunMode(emulate_cuda=True):
        assert torch.einsum("i,j->ij", v, v).dtype == torch.float32


# --------------------------------------------------------------------------- loading


def test_load_factory_from_a_file_with_and_without_the_name():
    path = MODELS / "llama_old.py"
    assert load_factory(f"{path}:poslint_factory").__name__ == "poslint_factory"
    assert load_factory(str(path)).__name__ == "poslint_factory"


def test_load_factory_from_a_dotted_module(tmp_path, monkeypatch):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rope.py").write_text("def build(seq_len=8192):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_factory("mypkg.rope:build").__name__ == "build"


def test_load_factory_file_may_import_its_neighbours(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 3\n")
    (tmp_path / "model.py").write_text("import helper\ndef poslint_factory(seq_len=8192):\n    return helper.VALUE\n")
    assert load_factory(f"{tmp_path / 'model.py'}:poslint_factory")() == 3
    assert str(tmp_path) not in sys.path


@pytest.mark.parametrize(
    "source, target_suffix, message",
    [
        (None, ":poslint_factory", "file not found"),
        ("x = 1\n", ":poslint_factory", "defines no 'poslint_factory'"),
        ("poslint_factory = 3\n", "", "is not callable"),
        ("raise ValueError('boom')\n", "", "raised ValueError: boom"),
    ],
)
def test_load_factory_errors(tmp_path, source, target_suffix, message):
    path = tmp_path / "m.py"
    if source is not None:
        path.write_text(source)
    with pytest.raises(VerifyError, match=message):
        load_factory(f"{path}{target_suffix}")


def test_load_factory_missing_module():
    with pytest.raises(VerifyError, match="importing no_such_pkg_xyz.mod raised ModuleNotFoundError"):
        load_factory("no_such_pkg_xyz.mod:f")


def test_lint_mode_never_imports_torch():
    code = textwrap.dedent(
        """
        import importlib, pathlib, runpy, sys
        import poslint
        root = pathlib.Path(poslint.__file__).parent
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            if parts[1] in ("runtime", "__main__"):
                continue
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        sys.argv = ["poslint", "check", sys.argv[1]]
        try:
            runpy.run_module("poslint", run_name="__main__")
        except SystemExit:
            pass
        print("torch" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code, str(MODELS / "llama_old.py")],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr


@pytest.mark.parametrize("make, references", [(torch.zeros, 1), (torch.randn, 3)])
def test_equal_inputs_share_one_float64_reference(make, references):
    calls = []

    def poslint_factory(seq_len=8192):
        calls.append(seq_len)
        return PolarRope(), lambda dtype: (make(seq_len, dtype=dtype),), {"position_axis": 0}

    result = verify_rotary(poslint_factory, seq_len=300)
    # one call for the options, one per reference, one per scenario
    assert len(calls) == 1 + references + len(SCENARIOS)
    assert result["autocast-cpu"].passed


def test_load_factory_file_may_define_dataclasses(tmp_path):
    (tmp_path / "dc.py").write_text(
        "from __future__ import annotations\nimport dataclasses\n"
        "@dataclasses.dataclass\nclass Config:\n    dim: int = 8\n"
        "def poslint_factory(seq_len=8192):\n    return Config().dim\n")
    assert load_factory(str(tmp_path / "dc.py"))() == 8


class BitsBuffer(nn.Module):
    """inv_freq kept as float32 bits in an int32 buffer (module.to(bf16) leaves integer buffers alone)."""

    def __init__(self, dim: int = 32):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("bits", inv_freq.float().view(torch.int32), persistent=False)

    def forward(self, x):
        t = torch.arange(x.shape[0], dtype=torch.float32)
        with torch.autocast("cpu", enabled=False):
            angles = torch.outer(t, self.bits.view(torch.float32))
        return angles.cos().to(x.dtype)


def test_reference_keeps_float_bits_round_trips():
    result = verify_rotary(BitsBuffer(), lambda dtype: (torch.zeros(8192, dtype=dtype),), position_axis=0)
    assert result.passed, result.format_table()
    assert 1e-4 < result["bf16"].max_angle_error <= 1e-3
