"""The real-model tier: `poslint --fix --unsafe-fixes` on copies of installed transformers
releases, then tiny seeded random models of a fixed list of architectures, before and after.

The releases are installed by `python scripts/install_real_models.py` (the README's test command
runs it first; the tests never use the network). Without them the tier is skipped, except under
CI=true, where it fails. Each release is fixed once; the models run in subprocesses, one
release on sys.path at a time (tests/real_models/probe.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = ROOT / "build" / "real_models"
PROBE = Path(__file__).parent / "real_models" / "probe.py"
RELEASES = ("transformers-4.36.2", "transformers-5.24.0")
# rotary (classic, partial, parallel), ALiBi (bloom, mpt, falcon), relative-position buckets (t5)
ARCHS = ("llama", "mistral", "qwen2", "gpt_neox", "phi", "falcon-rotary", "falcon", "bloom", "mpt", "t5")
SHARED_FILES = ("modeling_rope_utils.py",)  # the rotary frequencies of every 5.x model
# (release, arch) whose bf16 logits must get measurably closer to float32 (the original collided).
CLOSER = {("transformers-4.36.2", "llama"), ("transformers-4.36.2", "mistral"), ("transformers-4.36.2", "gpt_neox"),
          ("transformers-4.36.2", "phi"), ("transformers-4.36.2", "falcon-rotary")}


def _release_dir(release: str) -> Path:
    folder = INSTALLED / release
    if not (folder / "transformers" / "__init__.py").is_file():
        message = f"{folder} is missing: run `python scripts/install_real_models.py`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return folder


def _probe(out: Path, path_entries, modules) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path_entries))
    subprocess.run([sys.executable, str(PROBE), str(out), *modules, "--", *ARCHS], env=env, check=True,
                   timeout=900)
    return torch.load(out, weights_only=False)


@pytest.fixture(scope="module", params=RELEASES)
def release(request, tmp_path_factory):
    installed = _release_dir(request.param)
    work = tmp_path_factory.mktemp(request.param)
    package = work / "transformers"
    shutil.copytree(installed / "transformers", package, ignore=shutil.ignore_patterns("__pycache__"))
    targets = [package / "models" / a.split("-")[0] for a in ARCHS if (package / "models" / a.split("-")[0]).is_dir()]
    targets += [package / name for name in SHARED_FILES if (package / name).is_file()]
    fix = subprocess.run([sys.executable, "-m", "poslint", "check", "--no-cache", "--fix", "--unsafe-fixes",
                          "--exit-zero", "-q", *map(str, targets)], capture_output=True, text=True, cwd=work)
    assert fix.returncode == 0, fix.stderr
    changed = sorted(p.relative_to(work) for p in package.rglob("*.py")
                     if p.read_bytes() != (installed / p.relative_to(work)).read_bytes())
    modules = [".".join(p.with_suffix("").parts) for p in changed]
    original = _probe(work / "original.pt", [installed], modules)
    fixed = _probe(work / "fixed.pt", [work, installed], modules)
    return request.param, changed, original, fixed


def _error(low: torch.Tensor, fp32: torch.Tensor) -> float:
    return float((low - fp32).abs().mean())


def test_fix_changes_files_and_they_import(release):
    name, changed, _, fixed = release
    assert changed, f"{name}: poslint fixed nothing"
    assert fixed["import-errors"] == {}


@pytest.mark.parametrize("arch", ARCHS)
def test_fixed_model_keeps_float32_state_and_runs_in_16_bits(release, arch):
    name, _, original, fixed = release
    if arch not in original["archs"]:
        pytest.skip(f"{name} has no {arch}")
    before, after = original["archs"][arch], fixed["archs"][arch]
    assert "build-error" not in before, before["build-error"]
    assert "build-error" not in after, after["build-error"]
    assert after["state"] == before["state"]  # keys, shapes, dtypes
    assert torch.equal(after["fp32"], before["fp32"])
    for low in ("bf16", "fp16"):
        assert f"{low}-error" not in after, after[f"{low}-error"]
        assert after[f"{low}-generate"] == before[f"{low}-generate"]
        fixed_error, original_error = _error(after[low], after["fp32"]), _error(before[low], before["fp32"])
        assert fixed_error <= original_error * 1.02 + 1e-6, (low, fixed_error, original_error)
    if (name, arch) in CLOSER:
        fixed_error, original_error = _error(after["bf16"], after["fp32"]), _error(before["bf16"], before["fp32"])
        assert fixed_error < 0.8 * original_error, (fixed_error, original_error)
