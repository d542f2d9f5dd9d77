"""The real-model tier: `poslint --fix --unsafe-fixes` on copies of installed transformers
releases, then tiny seeded random models, before and after.

The releases are installed by `python scripts/install_real_models.py` (the README's test command
runs it first; the tests never use the network). Without them the tier is skipped, except under
CI=true, where it fails. Each release is fixed once; the models run in subprocesses, one
release on sys.path at a time (tests/real_models/probe.py).

What is fixed: all of `models/` in 4.36.2 (one file in each of 24 directories changes). In
5.24.0 a fix of the whole of `models/` changes about 230 directories and takes poslint 11
CPU-minutes, beyond CI's budget, so the tier fixes the directories of the fixed list, EXTRA_524
and the shared rotary frequencies (`modeling_rope_utils.py`); 19 directories change.

Two kinds of runs:
- the fixed list (ARCHS): rotary (classic, partial, parallel), ALiBi (bloom, mpt, falcon),
  relative-position buckets (t5), 3D multimodal rotary (qwen2_vl's mrope), 2D vision rotary
  (pixtral, qwen2_vl's vision tower) and rotation by complex numbers (deepseek_v2's torch.polar);
  the last three exist only in 5.24.0 (4.36.2 has no vision rotary nor complex rotation). Each
  gets float32 and bf16/fp16 outputs at 1024 tokens, generate() with a KV cache for the language
  models, and the bf16 error against float32, before and after;
- every `models/<dir>` that the fix changed: a generic tiny model of the first of its model
  types whose config shrinks with generic arguments (tests/real_models/probe.py), float32 and
  bf16 outputs on 48 tokens, each within a 30 s cap. The directories that cannot be run are
  listed in a warning with the reason. In 4.36.2 (2026-12-01) they are 10 of 24: patchtst,
  patchtsmixer and wav2vec2_conformer take no input_ids; clvp, idefics and sam stay above 20M
  parameters with the generic arguments; bros needs bounding boxes; funnel refuses
  num_hidden_layers (it wants block_sizes); transfo_xl refuses max_position_embeddings (it has no
  length limit); open_llama raises AttributeError (no rope_theta) before the fix as after. In
  5.24.0 every changed directory outside the fixed list runs.

And `poslint verify` on the releases' own classes, without a factory: LlamaRotaryEmbedding built
from (dim, max_position_embeddings, base) in 4.36.2 and from LlamaConfig (`--config-class`) in
5.24.0, before and after the fix, and bloom's build_alibi_tensor(mask, num_heads, dtype).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = ROOT / "build" / "real_models"
PROBE = Path(__file__).parent / "real_models" / "probe.py"
RELEASES = ("transformers-4.36.2", "transformers-5.24.0")
ARCHS = ("llama", "mistral", "qwen2", "gpt_neox", "phi", "falcon-rotary", "falcon", "bloom", "mpt", "t5",
         "qwen2_vl", "qwen2_vl-vision", "pixtral", "deepseek_v2")
# Fixed in 5.24.0 beyond the fixed list, for the generic run: other rotary families whose files change.
EXTRA_524 = ("gemma", "cohere", "olmo2", "stablelm", "starcoder2", "persimmon", "gptj", "glm4v", "llama4")
WHOLE_MODELS = {"transformers-4.36.2"}  # releases whose whole models/ folder is fixed
SHARED_FILES = ("modeling_rope_utils.py",)  # the rotary frequencies of every 5.x model
# (release, arch) whose bf16 logits must get measurably closer to float32 (mean error below 0.8 x
# the original's at 1024 tokens). 4.36.2 builds positions in bf16 (collisions); 5.24.0 computes
# positions and angles in float32, but model.to(torch.bfloat16) rounds the inv_freq buffer, whose
# relative error 2**-9 times the position is up to a radian by position 1024; the fix keeps inv_freq
# in full precision (an int32 view of its bits). Measured (2026-12-01), 4.36.2: llama 0.67 -> 0.031,
# gpt_neox 0.15 -> 0.011; 5.24.0: llama and mistral 0.092 -> 0.031, qwen2 0.080 -> 0.032, qwen2_vl
# 0.073 -> 0.029, falcon-rotary 0.016 -> 0.0098. Not listed, for a thin margin: 5.24.0's gpt_neox
# (0.80 x), phi (0.83 x) and deepseek_v2 (0.75 x), whose rotary covers a part of each head. The
# ALiBi, relative-position and vision models (positions below 64 per axis) do not change in bf16.
CLOSER = {("transformers-4.36.2", "llama"), ("transformers-4.36.2", "mistral"), ("transformers-4.36.2", "gpt_neox"),
          ("transformers-4.36.2", "phi"), ("transformers-4.36.2", "falcon-rotary"),
          ("transformers-5.24.0", "llama"), ("transformers-5.24.0", "mistral"), ("transformers-5.24.0", "qwen2"),
          ("transformers-5.24.0", "qwen2_vl"), ("transformers-5.24.0", "falcon-rotary")}


def _release_dir(release: str) -> Path:
    folder = INSTALLED / release
    if not (folder / "transformers" / "__init__.py").is_file():
        message = f"{folder} is missing: run `python scripts/install_real_models.py`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return folder


def _probe(out: Path, path_entries, modules, directories) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path_entries))
    subprocess.run([sys.executable, str(PROBE), str(out), *modules, "--", *ARCHS, "--", *directories], env=env,
                   check=True, timeout=900)
    return torch.load(out, weights_only=False)


def _model_dir(path: Path):
    """`transformers/models/deprecated/x/modeling_x.py` -> `deprecated.x`; None outside models/."""
    parts = path.parts
    if len(parts) < 4 or parts[1] != "models":
        return None
    return ".".join(parts[2:4]) if parts[2] == "deprecated" else parts[2]


def _targets(release: str, package: Path):
    if release in WHOLE_MODELS:
        return [package / "models"]
    names = {a.split("-")[0] for a in ARCHS} | set(EXTRA_524)
    targets = [package / "models" / n for n in sorted(names) if (package / "models" / n).is_dir()]
    return targets + [package / name for name in SHARED_FILES if (package / name).is_file()]


@pytest.fixture(scope="module", params=RELEASES)
def release(request, tmp_path_factory):
    installed = _release_dir(request.param)
    work = tmp_path_factory.mktemp(request.param)
    package = work / "transformers"
    shutil.copytree(installed / "transformers", package, ignore=shutil.ignore_patterns("__pycache__"))
    fix = subprocess.run([sys.executable, "-m", "poslint", "check", "--no-cache", "--fix", "--unsafe-fixes",
                          "--exit-zero", "-q", *map(str, _targets(request.param, package))],
                         capture_output=True, text=True, cwd=work)
    assert fix.returncode == 0, fix.stderr
    changed = sorted(p.relative_to(work) for p in package.rglob("*.py")
                     if p.read_bytes() != (installed / p.relative_to(work)).read_bytes())
    modules = [".".join(p.with_suffix("").parts) for p in changed if not p.name.startswith("modular_")]
    directories = sorted({d for d in map(_model_dir, changed) if d is not None})
    original = _probe(work / "original.pt", [installed], modules, directories)
    fixed = _probe(work / "fixed.pt", [work, installed], modules, directories)
    return request.param, changed, original, fixed, work


def _error(low: torch.Tensor, fp32: torch.Tensor) -> float:
    return float((low - fp32).abs().mean())


def test_fix_changes_files_and_they_import(release):
    name, changed, _, fixed, _ = release
    assert changed, f"{name}: poslint fixed nothing"
    assert fixed["import-errors"] == {}


@pytest.mark.parametrize("arch", ARCHS)
def test_fixed_model_keeps_float32_state_and_runs_in_16_bits(release, arch):
    name, _, original, fixed, _ = release
    if arch not in original["archs"]:
        pytest.skip(f"{name} has no {arch}")
    before, after = original["archs"][arch], fixed["archs"][arch]
    assert "build-error" not in before, before["build-error"]
    assert "build-error" not in after, after["build-error"]
    assert after["state"] == before["state"]  # keys, shapes, dtypes
    assert torch.equal(after["fp32"], before["fp32"])
    for low in ("bf16", "fp16"):
        assert f"{low}-error" not in after, after[f"{low}-error"]
        assert after.get(f"{low}-generate") == before.get(f"{low}-generate")
        fixed_error, original_error = _error(after[low], after["fp32"]), _error(before[low], before["fp32"])
        assert fixed_error <= original_error * 1.02 + 1e-6, (low, fixed_error, original_error)
    if (name, arch) in CLOSER:
        fixed_error, original_error = _error(after["bf16"], after["fp32"]), _error(before["bf16"], before["fp32"])
        assert fixed_error < 0.8 * original_error, (fixed_error, original_error)


def test_every_changed_architecture_keeps_float32_outputs(release):
    """Each changed models/<dir> that builds tiny: same float32 output and state_dict, and bf16
    runs wherever it ran before the fix."""
    name, _, original, fixed, _ = release
    skipped, failures, ran = [], [], []
    listed = {a.split("-")[0] for a in original["archs"]}  # run in full by the test above
    for directory, before in original["changed"].items():
        after = fixed["changed"][directory]
        if directory in listed:
            continue
        if "skipped" in before or "skipped" in after:
            skipped.append(f"{directory} ({before.get('skipped') or after.get('skipped')})")
            continue
        ran.append(directory)
        if after["state"] != before["state"]:
            failures.append(f"{directory}: state_dict signature changed")
        if not torch.equal(after["fp32"], before["fp32"]):
            failures.append(f"{directory}: float32 output changed by {_error(after['fp32'], before['fp32']):.3g}")
        if "bf16-error" in after and "bf16-error" not in before:
            failures.append(f"{directory}: bf16 forward raises {after['bf16-error']}")
    if skipped:
        warnings.warn(f"{name}: {len(skipped)} changed directories not run: " + "; ".join(skipped))
    assert not failures, failures
    assert ran, f"{name}: no changed directory could be run"


# `poslint verify` on the releases' own classes, without a factory, as a user runs it: the CLI in a
# subprocess with the release (pristine, or the fixed copy in front of it) on PYTHONPATH.
LLAMA_ROTARY = "transformers.models.llama.modeling_llama:LlamaRotaryEmbedding"
# 4.36.2 builds it from (dim, max_position_embeddings, base); 5.24.0 from a config.
LLAMA_ARGS = {"transformers-4.36.2": ["--arg", "max_position_embeddings=1024"],
              "transformers-5.24.0": ["--config-class", "transformers.LlamaConfig", "--arg", "hidden_size=4096",
                                      "--arg", "num_attention_heads=32"]}


def _verify(path_entries, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path_entries))
    return subprocess.run([sys.executable, "-m", "poslint", "verify", *args], env=env, capture_output=True,
                          text=True, timeout=600)


def _rows(stdout: str) -> dict:
    """scenario -> its table row, split in columns."""
    return {line.split()[0]: line.split() for line in stdout.splitlines()
            if line.split() and line.split()[0] in ("bf16", "fp16", "autocast-cpu", "autocast-cuda-emulated")}


VERIFY_DOC = ROOT / "docs" / "verify.md"


def _table(stdout: str):
    return [line for line in stdout.splitlines() if line.split() and line.split()[0] in _rows(stdout)]


def test_verify_runs_the_real_rotary_class_and_passes_it_once_fixed(release):
    name, _, _, _, work = release
    installed = _release_dir(name)
    seq_len = "4096" if name == "transformers-5.24.0" else "2048"  # 5.24.0: the docs' example
    args = [LLAMA_ROTARY, "--seq-len", seq_len, *LLAMA_ARGS[name]]
    before = _verify([installed], *args)
    assert before.returncode == 1, before.stdout + before.stderr
    rows = _rows(before.stdout)
    assert rows["bf16"][-1] == "FAIL" and rows["bf16"][1] == "bfloat16,bfloat16", before.stdout
    assert "bf16: angle error" in before.stdout
    if name == "transformers-4.36.2":  # positions rounded to bf16 in the rebuilt cache
        assert rows["bf16"][-2] != "0.0%", before.stdout
    else:  # positions in float32; the angle error comes from the inv_freq buffer that .to(bf16) rounded
        assert rows["bf16"][-2] == "0.0%", before.stdout
    after = _verify([work, installed], *args)
    assert after.returncode == 0, after.stdout + after.stderr
    assert {r[1] for r in _rows(after.stdout).values()} == {r[1] for r in rows.values()}  # output dtypes kept
    if name == "transformers-5.24.0":
        doc = VERIFY_DOC.read_text(encoding="utf-8")
        assert all(line in doc for line in _table(before.stdout) + _table(after.stdout)), "docs/verify.md is stale"


def test_verify_says_when_constructor_arguments_hide_the_rebuild():
    installed = _release_dir("transformers-4.36.2")
    result = _verify([installed], LLAMA_ROTARY, "--seq-len", "2048", "--arg", "max_position_embeddings=2048",
                     "--scenario", "bf16")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "note: max_position_embeddings=2048 >= 2048 positions" in result.stdout


@pytest.mark.parametrize("name", RELEASES)
def test_verify_runs_bloom_alibi_builder_from_mask_heads_and_dtype(name):
    installed = _release_dir(name)
    result = _verify([installed], "transformers.models.bloom.modeling_bloom:build_alibi_tensor", "--arg",
                     "num_heads=32")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "alibi, 8192 positions" in result.stdout
    rows = _rows(result.stdout)
    if name == "transformers-5.24.0":
        assert all(line in VERIFY_DOC.read_text(encoding="utf-8") for line in _table(result.stdout))
    # the absolute-position bias, rounded to bf16: nearest keys share values
    assert rows["bf16"][1] == "bfloat16" and rows["bf16"][-1] == "FAIL", result.stdout
    assert int(rows["bf16"][3]) < 64, result.stdout
    assert rows["autocast-cpu"][1] == "float32" and rows["autocast-cpu"][-1] == "pass", result.stdout


def test_detr_valid_ratios_selected_by_index_are_no_frequencies(tmp_path):
    """LW-DETR (5.24.0) scales reference boxes by each level's valid ratios, made in the activations'
    dtype, and turns the first level's points (``refs[:, :, 0, :]``) into its own sine embedding. The
    ratios are no frequencies: a selection by index carries no sink trace (the corpus re-run of
    session 25 caught a POS102 there from a strided-slice change)."""
    source = _release_dir("transformers-5.24.0") / "transformers"
    package = tmp_path / "transformers"
    (package / "models").mkdir(parents=True)
    shutil.copy(source / "__init__.py", package / "__init__.py")
    shutil.copy(source / "models" / "__init__.py", package / "models" / "__init__.py")
    for model in ("lw_detr", "deformable_detr", "conditional_detr"):
        shutil.copytree(source / "models" / model, package / "models" / model)
    target = package / "models" / "lw_detr" / "modular_lw_detr.py"
    proc = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "--exit-zero", "-q", str(target)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "POS102" not in proc.stdout, proc.stdout


LOADED_PROBE = """
import sys, torch
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM
config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                     num_key_value_heads=2, vocab_size=100)
LlamaForCausalLM(config).save_pretrained(sys.argv[1])

def rotary(model):
    inner = model.model
    return inner.rotary_emb if hasattr(inner, "rotary_emb") else inner.layers[0].self_attn.rotary_emb

loaded = AutoModelForCausalLM.from_pretrained(sys.argv[1], torch_dtype=torch.bfloat16)
built = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
print(loaded.lm_head.weight.dtype, rotary(loaded).inv_freq.dtype, rotary(built).inv_freq.dtype)
loaded.half()
print(rotary(loaded).inv_freq.dtype)
"""


@pytest.mark.parametrize("version", RELEASES)
def test_a_loaded_model_keeps_its_rotary_frequencies_float32(version, tmp_path):
    # What poslint assumes of a model transformers' loaders return (library_summaries.TRANSFORMERS_LOADERS):
    # weights in the load dtype, rotary inv_freq float32 until the model is converted.
    env = dict(os.environ, PYTHONPATH=str(_release_dir(version)))
    run = subprocess.run([sys.executable, "-c", LOADED_PROBE, str(tmp_path / "model")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["torch.bfloat16", "torch.float32", "torch.float32", "torch.float16"]
