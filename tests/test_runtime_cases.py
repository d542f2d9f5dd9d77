"""Every registered model reproduces its bug at runtime, and every fixed twin passes every scenario."""

from __future__ import annotations

import difflib
import functools
import re
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from runtime_cases import CASES, Case

from poslint.edge.cli import main
from poslint.runtime import SCENARIOS, Thresholds, load_factory, verify

# meta_polar's bug is module.to(bf16) casting its complex freqs_cis buffer to real; torch warns.
pytestmark = pytest.mark.filterwarnings("ignore:Casting complex values to real discards the imaginary part")

ROOT = Path(__file__).resolve().parent.parent
BY_PATH = {case.path: case for case in CASES}


def scenarios(case: Case):
    """The default scenarios, plus any a buggy case (or a fixed twin's buggy case) asks for."""
    buggy = _buggy_twin(case) or case
    return SCENARIOS + tuple(name for name in buggy.where if name not in SCENARIOS)


@functools.lru_cache(maxsize=None)
def run(case: Case):
    return verify(load_factory(str(ROOT / case.path)), seq_len=case.seq_len, scenarios=scenarios(case))


def _buggy_twin(case: Case):
    return BY_PATH.get(case.path.replace("__fixed.py", ".py")) if case.path.endswith("__fixed.py") else None


def _params(cases, note):
    return [
        pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=getattr(c, note)))
        if getattr(c, note) else pytest.param(c, id=c.id)
        for c in cases
    ]


@pytest.mark.parametrize("case", _params(CASES, "issue"))
def test_case_behaves_as_registered(case: Case):
    result = run(case)
    assert result.kind == case.kind
    assert list(result.scenarios) == list(scenarios(case))
    table = result.format_table()
    if case.expect == "pass":
        assert result.passed, table
        for s in result.scenarios.values():
            if case.kind == "rotary":
                assert s.collisions == 0.0, table
                assert s.max_angle_error is None or s.max_angle_error <= 1e-3, table
            else:
                assert s.relative_bias_error <= Thresholds().alibi_relative_error, table
        return
    assert case.expect in ("collide", "fail"), case.expect
    for name in case.where:
        s = result[name]
        assert not s.passed, f"{name} passed\n{table}"
        if case.expect == "collide" and case.kind == "rotary":
            assert s.collisions >= 0.8, f"{name}: {s.collisions:.1%} collisions\n{table}"
        if case.expect == "collide" and case.kind == "alibi":
            assert s.distinct_nearest <= 5, f"{name}: {s.distinct_nearest} distinct\n{table}"


TWINS = [c for c in CASES if _buggy_twin(c) is not None]


@pytest.mark.parametrize("case", TWINS, ids=[c.id for c in TWINS])
def test_fix_keeps_output_dtypes(case: Case):
    fixed, buggy = run(case), run(_buggy_twin(case))
    for name in scenarios(case):
        assert fixed[name].output_dtypes == buggy[name].output_dtypes, name


BUGGY_FIXTURES = [c for c in CASES if c.expect != "pass" and c.path.startswith("tests/fixtures/")]


@pytest.mark.parametrize("case", _params(BUGGY_FIXTURES, "fix_issue"))
def test_fix_output_passes_every_scenario(case: Case, tmp_path):
    fixed_path = tmp_path / Path(case.path).name
    shutil.copy(ROOT / case.path, fixed_path)
    fix = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "--quiet", str(fixed_path)])
    assert fix.exception is None or isinstance(fix.exception, SystemExit), fix.output
    if case.no_fix:
        assert fixed_path.read_text(encoding="utf-8") == (ROOT / case.path).read_text(encoding="utf-8")
        assert fix.exit_code == 1 and "[*]" not in fix.output, fix.output  # the finding stays
        return
    assert fixed_path.read_text(encoding="utf-8") != (ROOT / case.path).read_text(encoding="utf-8")
    fixed = verify(load_factory(str(fixed_path)), seq_len=case.seq_len, scenarios=scenarios(case))
    assert fixed.passed, fixed.format_table()
    buggy = run(case)
    for name in scenarios(case):
        assert fixed[name].output_dtypes == buggy[name].output_dtypes, name
    # A model whose float32 run is already right keeps its float32 values exactly (explicit 16-bit
    # positions are wrong in a float32 model too: a fix of a 16-bit dtype the code hard-codes,
    # which the reference keeps, changes them).
    float32_run = verify(load_factory(str(ROOT / case.path)), seq_len=case.seq_len, scenarios=("fp32",))
    hard_coded = {int(line) for note in float32_run.notes for line in re.findall(r"hard-codes at \S+:(\d+)", note)}
    if float32_run.passed and not hard_coded & _changed_lines(ROOT / case.path, fixed_path):
        before, after = _float32_outputs(ROOT / case.path, case), _float32_outputs(fixed_path, case)
        assert len(before) == len(after)
        for old, new in zip(before, after):
            if case.kind == "rotary":
                assert torch.equal(old, new), "float32 outputs changed"
            else:  # a bias made relative to the query moves each query's row by one constant
                assert _same_up_to_a_row_constant(old, new), "float32 bias changed beyond a per-query shift"


def _changed_lines(original: Path, fixed: Path):
    """The 1-based lines of ``original`` that the fix rewrote."""
    before = original.read_text(encoding="utf-8").splitlines()
    after = fixed.read_text(encoding="utf-8").splitlines()
    opcodes = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
    return {line + 1 for tag, i1, i2, _, _ in opcodes if tag != "equal" for line in range(i1, max(i2, i1 + 1))}


def _float32_outputs(path: Path, case: Case):
    """The whole model's outputs in float32, built and run from the same seeds, on one thread (a
    threaded matmul may sum in another order from one call to the next under load)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        module, make_inputs = load_factory(str(path))(case.seq_len)[:2]
        torch.manual_seed(1)
        with torch.no_grad():
            return _tensors(module(*make_inputs(torch.float32)))
    finally:
        torch.set_num_threads(threads)


def _same_up_to_a_row_constant(old, new):
    finite = torch.isfinite(old)
    if not torch.equal(finite, torch.isfinite(new)):
        return False
    shift = new - old
    highest = torch.where(finite, shift, torch.full_like(old, -torch.inf)).amax(dim=-1)
    lowest = torch.where(finite, shift, torch.full_like(old, torch.inf)).amin(dim=-1)
    spread = torch.where(torch.isfinite(highest), highest - lowest, torch.zeros_like(highest)).max()
    return bool(spread <= 1e-6 * old[finite].abs().max().clamp(min=1.0))


def _tensors(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    return [t for part in out for t in _tensors(part)] if isinstance(out, (tuple, list)) else []


def test_every_fixture_with_a_factory_is_registered():
    registered = {c.path for c in CASES}
    missing = sorted(
        str(p.relative_to(ROOT))
        for p in ROOT.glob("tests/fixtures/*/checker/*.py")
        if "def poslint_factory" in p.read_text(encoding="utf-8", errors="replace")
        and str(p.relative_to(ROOT)) not in registered
    )
    assert not missing, "add a Case line to tests/runtime_cases.py for: " + ", ".join(missing)


def test_every_fixed_fixture_has_its_buggy_twin_registered():
    orphans = [c.path for c in CASES if c.path.endswith("__fixed.py") and _buggy_twin(c) is None]
    assert not orphans, orphans
