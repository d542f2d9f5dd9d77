"""Project-wide analysis (issue 13): imports followed into the project's other modules.

Each package under ``tests/fixtures/projects/`` holds a bug that only shows across two files,
and near-misses beside it that must stay silent. The expected findings below are the whole
output: every other line of every file is a near-miss.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from poslint.analysis.names import absolute_module
from poslint.engine.imports import ProjectFiles, module_of
from poslint.engine.prefilter import may_have_findings

PROJECTS = Path(__file__).parent / "fixtures" / "projects"

# (path, line, code, words the message must hold)
EXPECTED = {
    "split_rotary": [
        # The positions' dtype is chosen in model.py; the product that rounds them is in rotary.py.
        ("splitrot/model.py", 17, "POS101", "(in splitrot/layers/rotary.py, reached by the call on line 18)"),
    ],
    "alibi_helper": [
        # The cast to the activation dtype is in bias.py; the dtype comes from this call.
        ("alibipkg/model.py", 15, "POS201", "(in alibipkg/bias.py:17, reached by this call)"),
    ],
    "rope_utils": [
        # The frequencies' role comes from rope_utils.py; the product is here.
        ("freqpkg/model.py", 16, "POS101", "positions take the activation dtype (x.dtype)"),
    ],
    "base_hook": [
        # base.py's own finding: its forward rebuilds the cache from the converted buffer.
        ("hookpkg/base.py", 17, "POS106", "upcast at use"),
        # The override of a hook that the base's forward calls runs after model.to().
        ("hookpkg/scaled.py", 15, "POS101", "the dtype of buffer 'inv_freq'"),
        ("hookpkg/scaled.py", 16, "POS102", "buffer 'inv_freq'"),
    ],
    "inherited_buffer": [
        # angles.py alone holds no rotary word: the buffer and its role come from base.py.
        ("ibuf/angles.py", 8, "POS101", "the dtype of buffer 'inv_freq'"),
        ("ibuf/angles.py", 8, "POS102", "buffer 'inv_freq'"),
    ],
    "learned_rotation": [
        # Only the twin: the angles forward receives. The buffer that the imported base's
        # constructor fills with zeros through a third module's helper is one value (near-misses).
        ("rotpkg/fast.py", 31, "POS104", "angles are cast to the activation dtype (x.dtype)"),
    ],
    "two_hops": [
        # attention.py chooses the activation dtype for the bias that bias.py casts to.
        ("hoppkg/attention.py", 17, "POS201", "(in hoppkg/bias.py:12, reached by this call)"),
        # block.py chooses float16 itself; its other call, two modules from the cast, is silent.
        ("hoppkg/block.py", 28, "POS201", "cast to explicit torch.float16"),
    ],
    "namespace_dir": [
        # layers/ has no __init__.py: a namespace portion of nspkg, which attention.py imports
        # from all the same. It builds Rotary with the default flag: the legacy branch (a
        # buffer-dtype arange, the raw buffer) never runs; the upcast at use is reported.
        ("nspkg/layers/rotary.py", 19, "POS106", "upcast at use"),
        # libs/ has no __init__.py either, between nspkg and the encoder package: the same.
        ("nspkg/libs/encoder/rope.py", 19, "POS106", "upcast at use"),
    ],
    "namespace_top": [
        # No __init__.py anywhere: the folders are namespace packages all the same. vit.py holds the
        # vision rotary only through a plain object, which no model's conversion reaches (silent);
        # the text rotary is a module's submodule.
        ("encoders/text/rot1d.py", 11, "POS101", "the dtype of parameter 'freqs'"),
        ("encoders/text/rot1d.py", 11, "POS102", "parameter 'freqs'"),
    ],
    "module_elsewhere": [
        # drive.py hands each sampler its network (`Sampler(transformer=Backbone())`, and through a
        # local bound once, `net_cls = Backbone`): the time grids made in the converted parameters'
        # dtype reach the network's sinusoid. Float32Sampler's float32 grid stays silent.
        ("drvpkg/net.py", 40, "POS101", "the dtype of 'cond'"),
        ("drvpkg/net.py", 53, "POS101", "next(self.parameters()).dtype"),
    ],
    "flag_elsewhere": [
        # Built in attention.py with the flag off: only the legacy branch runs. attention.py imports
        # the classes under try/except ImportError and asserts they are not None: no other use.
        ("flagpkg/rotary.py", 39, "POS101", "the dtype of buffer 'inv_freq'"),
        ("flagpkg/rotary.py", 40, "POS106", "upcast at use"),
        # Rotary, built there with the default flag only, is silent: its legacy branch never runs.
    ],
    "required_flags": [
        # Every instantiation in the package's models passes causal=True: both of KeyBiases'
        # tables run from the last key, one flipped to absolute positions. PairBiases is built
        # non-causal and unflipped (query-relative, silent); the tests build every configuration,
        # on three keys, and neither settle the flags nor run under a 16-bit default dtype.
        ("reqpkg/biases.py", 27, "POS201", "buffer 'slopes' and multiply absolute positions"),
        ("reqpkg/biases.py", 30, "POS201", "cast to the activation dtype (scores.dtype)"),
    ],
    "method_elsewhere": [
        # rope.py calls update() only from the constructor; the encoder, holding what the
        # factory built, calls it in forward, after model.to(). FixedRotary's refresh() is called
        # elsewhere only while the encoder is built (a near-miss).
        ("methpkg/rope.py", 15, "POS106", "upcast at use"),
    ],
    "helper_twice": [
        # One embedding module projects the timestep and then the guidance through the same helper;
        # the host's first round does not reach the call (it learns the attribute there), and the
        # first projection must not be taken for plain arithmetic because the helper's sin/cos were
        # not seen yet. model_f32.py keeps both float32 (a near-miss).
        ("twicepkg/model.py", 13, "POS101", "takes the activation dtype (hidden_states.dtype)"),
        ("twicepkg/model.py", 14, "POS101", "takes the activation dtype (hidden_states.dtype)"),
    ],
    "kept_elsewhere": [
        # model.py lists the module it holds KeptRotary under in _keep_in_fp32_modules_strict:
        # loaders keep that buffer float32. PlainRotary, held under a name not listed, is converted.
        ("keeppkg/layers.py", 24, "POS106", "upcast at use"),
    ],
    "classmethod_builder": [
        # driver.py's constructor loads the model through its from_pretrained classmethod, whose
        # cls(...) builds the model and runs no forward: forward's positions (a true division) keep
        # the float32 default. (Binding cls as an instance once called forward at construction.)
        ("ttspkg/model.py", 18, "POS106", "upcast at use"),
    ],
    "converted_elsewhere": [
        # stage.py converts its Decoder to float32 in its loader: the rotary inside stays float32. Its
        # InitDecoder is converted in __init__ only, which a user's later model.to(torch.bfloat16) undoes.
        # rope.py's rotary is held by a plain Grid, which tower.py's module builds: no conversion reaches it.
        ("convpkg/decoder.py", 33, "POS102", "model.to(torch.bfloat16) rounds them"),
    ],
    "star_imports": [
        # encoders.py takes torch, nn and math from imports.py by a star import; its float32 twin is silent.
        ("starpkg/encoders.py", 10, "POS105", "under a bfloat16 default dtype"),
    ],
    "annotated_parts": [
        # decode.py's Decoder is handed the model (`model: Model`, a class of modeling.py): each
        # layer's rotary buffer, converted, upcast at use; fresh_angles recomputes in float32.
        ("annpkg/decode.py", 29, "POS106", "upcast at use"),
        # HubDecoder is handed a model on a library's base class (PreTrainedModel, not read): a
        # torch module all the same, by its forward.
        ("annpkg/decode.py", 42, "POS106", "upcast at use"),
    ],
    "script_paths": [
        # encoder.py puts its submodules/ directory on sys.path from __file__ and imports bias.py by
        # its bare name; a sys.path entry outside the project is never read.
        ("scriptpkg/model/encoder.py", 24, "POS201", "(in scriptpkg/model/submodules/bias.py:7, reached by this call)"),
        # runner/model.py imports the vendored `core` package by its top-level name: found in the
        # directory above it, as its authors' sys.path has it; `missing_vendor` is nowhere: opaque.
        ("scriptpkg/vendored/runner/model.py", 13, "POS101", "(in scriptpkg/vendored/core/rope.py, reached by"),
    ],
    "instance_built": [
        # The solver builds and calls a conditioner whose sinusoid only its constructor attaches:
        # building and calling an instance run __init__ and forward, unnamed.
        ("tickpkg/solver.py", 10, "POS101", "(in tickpkg/embed.py, reached by the call on line 11)"),
    ],
    "hyphen_checkout": [
        # A checkout cloned as Open-DiT/ (no identifier, no __init__.py anywhere): the sampler's
        # `from odit.models.dit import DiT` resolves in the folder above it, and calling the model
        # runs its forward, which the sampler never names.
        ("Open-DiT/odit/utils/sampling.py", 10, "POS101", "takes the activation dtype (latents.dtype)"),
        # `from ..dit import timestep_embedding` two folders down: odit is a namespace package of
        # the checkout's folder, so the relative import resolves.
        ("Open-DiT/odit/models/heads/time_head.py", 15, "POS101", "(in Open-DiT/odit/models/dit.py"),
    ],
    "class_line": [
        # leaf.py's class reads a buffer that base.py registers, through middle.py's class: the
        # middle module's own analysis resolves no imported base, the linted file's does.
        ("lineage/leaf.py", 11, "POS106", "buffer 'inv_freq' are upcast at use"),
    ],
    "handed_decoder": ["shapepkg", "points", "volume", "model", "PointFourier", "PointDecoder", "dense_grid",
                       "VolumeDecoding", "Float32VolumeDecoding", "TypedVolumeDecoding", "OwnDecoderVolume", "ShapeModel", "decoder",
                       "point_decoder", "volume", "float32_volume", "typed_volume", "own_volume", "decode", "queries"],
    "offload_pipeline": ["offpkg", "denoiser", "pipeline", "Denoiser", "Pipeline", "model", "sample",
                         "sample_float32_time", "time_in", "width"],
    "handed_down": [
        # model.py hands a library rotary module to blocks.py's stack, which hands it two
        # constructors down to the attention that rotates with it.
        ("handpkg/model.py", 13, "POS101", "(in handpkg/blocks.py:14, reached by this call)"),
        ("handpkg/model.py", 13, "POS102", "(in handpkg/blocks.py:14, reached by this call)"),
    ],
    "handed_decoder": [
        # volume.py casts the query grid and calls the decoder it is handed (a plain Callable):
        # model.py, which hands it the point decoder, shows what the decoder does with the grid.
        ("shapepkg/model.py", 17, "POS101", "(in shapepkg/volume.py:18, reached by this call)"),
        # With the decoder's class annotated, or the decoder its own, volume.py shows it itself
        # (and model.py does not again).
        ("shapepkg/volume.py", 32, "POS101", "(in shapepkg/points.py, reached by the call on line 33)"),
        ("shapepkg/volume.py", 44, "POS101", "(in shapepkg/points.py, reached by the call on line 45)"),
    ],
    "offload_pipeline": [
        # pipeline.py moves its model to the device before each step (``self.model =
        # self.model.to(device)``): still denoiser.py's model, which the bfloat16 time reaches.
        ("offpkg/pipeline.py", 15, "POS101", "takes explicit torch.bfloat16"),
    ],
    "cycle": [
        ("cyc/freqs.py", 11, "POS101", "(cyc/positions.py:7)"),
        ("cyc/positions.py", 11, "POS101", "explicit torch.float16"),
    ],
}

# The expected findings that one file shows alone.
SINGLE_FILE = {("hookpkg/base.py", "POS106"), ("rotpkg/fast.py", "POS104")}
# Where a file alone shows more: rotary.py alone does not know how attention.py builds its classes.
ALONE = {"namespace_top": [("encoders/text/rot1d.py", 11, "POS101"), ("encoders/text/rot1d.py", 11, "POS102"),
                           ("encoders/vision/rot.py", 14, "POS102")],
         "flag_elsewhere": [("flagpkg/rotary.py", 20, "POS101"), ("flagpkg/rotary.py", 22, "POS102"),
                            ("flagpkg/rotary.py", 39, "POS101"), ("flagpkg/rotary.py", 40, "POS106")],
         "kept_elsewhere": [("keeppkg/layers.py", 12, "POS106"), ("keeppkg/layers.py", 24, "POS106")],
         "classmethod_builder": [("ttspkg/model.py", 18, "POS106")],
         "namespace_dir": [("nspkg/layers/rotary.py", 19, "POS106"), ("nspkg/layers/rotary.py", 21, "POS101"),
                           ("nspkg/layers/rotary.py", 23, "POS102"), ("nspkg/libs/encoder/rope.py", 19, "POS106"),
                           ("nspkg/libs/encoder/rope.py", 21, "POS101"), ("nspkg/libs/encoder/rope.py", 23, "POS102")],
         "converted_elsewhere": [("convpkg/decoder.py", 12, "POS102"), ("convpkg/decoder.py", 33, "POS102"),
                                 ("convpkg/rope.py", 11, "POS101"), ("convpkg/rope.py", 11, "POS102")]}


def _findings(cwd: Path, *args: str):
    """poslint's findings in ``cwd`` as sorted (path, line, code, message)."""
    proc = subprocess.run([sys.executable, "-m", "poslint", "--output-format", "json", *args], cwd=cwd,
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((Path(d["filename"]).as_posix(), d["location"]["row"], d["code"], d["message"])
                  for d in json.loads(proc.stdout))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cross_file_findings_and_near_misses(name, tmp_path):
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    found = _findings(project, "--no-cache", ".")
    assert [(p, line, code) for p, line, code, _ in found] == sorted((p, line, c) for p, line, c, _ in EXPECTED[name])
    for (path, line, code, message), (_, _, _, words) in zip(found, sorted(EXPECTED[name])):
        assert words in message, message


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_alone_shows_only_its_own_findings(name, tmp_path):
    """With imports not followed, only the findings that one file shows remain (base.py's own)."""
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    found = _findings(project, "--no-cache", "--config", "follow-imports=false", ".")
    own = ALONE.get(name) or [(p, line, c) for p, line, c, _ in EXPECTED[name] if (p, c) in SINGLE_FILE]
    assert [(p, line, code) for p, line, code, _ in found] == own


def test_partial_run_reads_imported_modules_but_reports_nothing_for_them(tmp_path):
    project = tmp_path / "base_hook"
    shutil.copytree(PROJECTS / "base_hook", project)
    found = _findings(project, "--no-cache", "hookpkg/scaled.py")
    assert [(p, line, code) for p, line, code, _ in found] == [("hookpkg/scaled.py", 15, "POS101"),
                                                               ("hookpkg/scaled.py", 16, "POS102")]
    # Linted from elsewhere, by path, as pre-commit does: the package is found from its __init__.py files.
    found = _findings(tmp_path, "--no-cache", "base_hook/hookpkg/scaled.py")
    assert [code for _, _, code, _ in found] == ["POS101", "POS102"]


def test_cache_is_invalidated_when_an_imported_file_changes(tmp_path):
    project = tmp_path / "split_rotary"
    shutil.copytree(PROJECTS / "split_rotary", project)
    assert [c for _, _, c, _ in _findings(project, ".")] == ["POS101"]
    assert [c for _, _, c, _ in _findings(project, ".")] == ["POS101"]  # from the cache
    cache = next((project / ".poslint_cache").glob("poslint-*.json"))
    recorded = json.loads(cache.read_text())["dependencies"]
    assert any(path.endswith(os.path.join("layers", "rotary.py")) for deps in recorded.values() for path in deps)
    rotary = project / "splitrot" / "layers" / "rotary.py"
    text = rotary.read_text()
    # rotary.py stops multiplying the caller's positions: model.py, unchanged, is clean now.
    rotary.write_text(text.replace("freqs = positions[..., None] *",
                                   "freqs = torch.arange(positions.shape[0], dtype=torch.float32)[..., None] *"))
    assert _findings(project, ".") == []
    rotary.write_text(text)
    assert [c for _, _, c, _ in _findings(project, ".")] == ["POS101"]


def test_prefilter_lets_through_files_whose_imports_carry_roles(tmp_path):
    """These hosts are cleared by the per-file prefilter, yet have project findings: the project
    prefilter sends them to the analysis, and the result is the same as without any prefilter."""
    hosts = [PROJECTS / "alibi_helper/alibipkg/model.py", PROJECTS / "rope_utils/freqpkg/model.py",
             PROJECTS / "cycle/cyc/positions.py", PROJECTS / "inherited_buffer/ibuf/angles.py",
             PROJECTS / "instance_built/tickpkg/solver.py"]
    assert not any(may_have_findings(p.read_text()) for p in hosts)
    from poslint.engine.checker import check_text
    from poslint.rules import all_rules

    for host in hosts:
        files = ProjectFiles([str(host.parents[1])], str(host.parents[1]))
        text = host.read_text()
        with_prefilter = check_text(text, str(host), frozenset(all_rules()), project=files)
        without = check_text(text, str(host), frozenset(all_rules()), project=files, prefilter=False)
        assert with_prefilter.diagnostics == without.diagnostics != []
        assert with_prefilter.dependencies  # what the result depends on, for the cache


def test_project_prefilter_clears_files_that_import_nothing_that_matters(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (package / "rope.py").write_text("import torch\n\ndef inv_freq(d):\n    return 1.0 / 10000 ** (torch.arange(0, d, 2) / d)\n")
    files = ProjectFiles([str(tmp_path)], str(tmp_path))
    files.for_host(str(package / "user.py"))
    assert not files.imports_may_matter("from .util import add\nx = add(1, 2)\n")
    assert files.imports_may_matter("from .rope import inv_freq\n")
    assert files.imports_may_matter("from pkg import rope\n")
    assert files.imports_may_matter("import pkg.rope as r\n")
    # A name whose definition mentions one that carries a role (in its module, or imported there).
    (package / "wrap.py").write_text("from .rope import inv_freq\n\ndef table(d):\n    return inv_freq(d)\n")
    assert files.imports_may_matter("from .wrap import table\n")
    # Of a class, what the file can reach: methods it names, attributes it reads, the class body,
    # and what building and calling an instance run unnamed (its constructor, its forward).
    base = PROJECTS / "inherited_buffer" / "ibuf" / "base.py"
    (package / "base.py").write_text(base.read_text())
    subclass = "from .base import Base\n\nclass S(Base):\n    def f(self):\n        return self.{}\n"
    assert files.imports_may_matter(subclass.format("inv_freq"))
    assert files.imports_may_matter(subclass.format("dim"))  # S() runs Base.__init__, which registers it
    (package / "lazy.py").write_text("import torch\nfrom torch import nn\n\n\nclass Lazy(nn.Module):\n"
                                     "    def __init__(self, dim):\n        super().__init__()\n        self.dim = dim\n\n"
                                     "    def table(self):\n"
                                     "        return 1.0 / (10000 ** (torch.arange(0, self.dim, 2).float() / self.dim))\n")
    user = "from .lazy import Lazy\n\nclass S(Lazy):\n    def f(self):\n        return self.{}\n"
    assert files.imports_may_matter(user.format("table()"))
    assert not files.imports_may_matter(user.format("dim"))


def test_a_class_whose_import_resolves_to_itself_is_no_cycle(tmp_path):
    # A vendored copy that subclasses the package it wraps under the same dotted name
    # (``from vendor.transports.params import Params as _Params`` inside vendor/transports/params.py):
    # found in the tree, the base is the class itself; the prefilter once recursed on it.
    folder = tmp_path / "proj" / "agents" / "vendor" / "transports"
    folder.mkdir(parents=True)
    for package in (tmp_path / "proj", tmp_path / "proj" / "agents", folder.parent, folder):
        (package / "__init__.py").write_text("")
    (folder / "params.py").write_text("from vendor.transports.params import Params as _Params\n\n\n"
                                      "class Params(_Params):\n    flag: bool = True\n")
    result = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "-j", "1", str(tmp_path / "proj")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert "internal error" not in result.stderr


def test_relative_imports_resolve_against_the_package():
    import ast

    def resolve(source, package):
        return absolute_module(ast.parse(source).body[0], package)

    assert resolve("from .rotary import R", "pkg.layers") == "pkg.layers.rotary"
    assert resolve("from ..utils import f", "pkg.layers") == "pkg.utils"
    assert resolve("from . import rotary", "pkg") == "pkg"
    assert resolve("from ... import x", "pkg.layers") is None  # above the top package
    assert resolve("from .rotary import R", None) is None  # the layout does not tell
    assert resolve("from torch import nn", None) == "torch"


def test_module_names_from_packages_and_src_roots(tmp_path):
    (tmp_path / "src" / "pkg" / "sub").mkdir(parents=True)
    for init in ("src/pkg/__init__.py", "src/pkg/sub/__init__.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "src" / "pkg" / "sub" / "mod.py").write_text("")
    (tmp_path / "src" / "nspkg").mkdir()
    (tmp_path / "src" / "nspkg" / "mod.py").write_text("")
    (tmp_path / "script.py").write_text("")
    src = [str(tmp_path), str(tmp_path / "src")]
    assert module_of(str(tmp_path / "src/pkg/sub/mod.py"), src) == ("pkg.sub.mod", False, str(tmp_path / "src"))
    assert module_of(str(tmp_path / "src/pkg/sub/__init__.py"), src) == ("pkg.sub", True, str(tmp_path / "src"))
    assert module_of(str(tmp_path / "src/nspkg/mod.py"), src)[:2] == ("src.nspkg.mod", False)
    assert module_of(str(tmp_path / "src/nspkg/mod.py"), src[1:])[:2] == ("nspkg.mod", False)
    assert module_of(str(tmp_path / "script.py"), src)[:2] == ("script", False)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_symbolic_link_out_of_the_project_is_never_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rope.py").write_text("def f():\n    return 1\n")
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    os.symlink(outside / "rope.py", root / "pkg" / "rope.py")
    files = ProjectFiles([str(root)], str(root))
    files.for_host(str(root / "pkg" / "model.py"))
    assert files.find("pkg.rope") is None
    assert files.find("pkg") is not None


def test_findings_are_the_same_in_one_process_and_in_a_pool(tmp_path):
    tree = tmp_path / "projects"
    shutil.copytree(PROJECTS, tree)
    one = _findings(tree / "base_hook", "--no-cache", "-j", "1", ".")
    pool = _findings(tree / "base_hook", "--no-cache", "-j", "2", ".")
    assert one == pool


# Package and module names of the fixture packages: renaming them consistently (directories,
# files and every mention) changes no finding.
MODULE_NAMES = {
    "split_rotary": ["splitrot", "layers", "rotary", "model_ok", "model"],
    "alibi_helper": ["alibipkg", "bias", "model"],
    "rope_utils": ["freqpkg", "rope_utils", "model"],
    "base_hook": ["hookpkg", "base", "scaled"],
    "learned_rotation": ["rotpkg", "identity", "base", "fast"],
    "two_hops": ["hoppkg", "bias", "attention", "block"],
    "flag_elsewhere": ["flagpkg", "rotary", "attention"],
    "namespace_top": ["encoders", "vision", "text", "rot", "vit", "rot1d", "model", "Grid2D", "Rotary",
                      "Rotary1D", "ViT", "TextEncoder", "grid", "rotary"],
    "module_elsewhere": ["drvpkg", "net", "drive", "Sampler", "LoopSampler", "Float32Sampler", "Backbone",
                         "TimeEmbed", "transformer", "net_cls", "build", "build_loop"],
    "cycle": ["cyc", "freqs", "positions"],
    "helper_twice": ["twicepkg", "emb", "model", "model_f32", "CombinedGuidance", "Timesteps", "Flux",
                     "get_timestep_embedding", "time_proj", "time_text_embed"],
    "method_elsewhere": ["methpkg", "rope", "encoder", "GrowingRotary", "FixedRotary", "build_rope", "update",
                         "refresh", "Encoder"],
    "inherited_buffer": ["ibuf", "base", "angles", "other"],
    "class_line": ["lineage", "base", "middle", "leaf", "FrequencyHolder", "PlainHolder", "Middle", "PlainMiddle",
                   "Leaf", "PlainLeaf", "FreshLeaf", "inv_freq", "width"],
    "handed_decoder": ["shapepkg", "points", "volume", "model", "PointFourier", "PointDecoder", "dense_grid",
                       "VolumeDecoding", "Float32VolumeDecoding", "TypedVolumeDecoding", "OwnDecoderVolume", "ShapeModel", "decoder",
                       "point_decoder", "volume", "float32_volume", "typed_volume", "own_volume", "decode", "queries"],
    "offload_pipeline": ["offpkg", "denoiser", "pipeline", "Denoiser", "Pipeline", "model", "sample",
                         "sample_float32_time", "time_in", "width"],
    "handed_down": ["handpkg", "blocks", "model", "Attention", "Layer", "Stack", "Model", "NoRotaryModel", "rotary",
                    "attention", "first", "stack"],
    "kept_elsewhere": ["keeppkg", "layers", "model", "KeptRotary", "PlainRotary", "Backbone", "rotary_emb",
                       "other_rope"],
    "classmethod_builder": ["ttspkg", "model", "driver", "frame_positions", "Rotary", "SpeechLM", "Driver",
                            "from_pretrained", "audio_start", "rotary", "speak"],
    "converted_elsewhere": ["convpkg", "decoder", "stage", "Rotary", "Decoder", "InitRotary", "InitDecoder",
                            "Stage", "rotary", "other", "load_weights", "rope", "tower", "AxialRotary", "Grid",
                            "Tower", "freqs"],
    "star_imports": ["starpkg", "imports", "encoders", "SinusoidTable", "Float32SinusoidTable"],
    "annotated_parts": ["annpkg", "modeling", "decode", "Rotary", "Attention", "Model", "Decoder", "angles_at",
                        "fresh_angles", "rotary", "layers", "step", "HubModel", "HubDecoder"],
    "script_paths": ["scriptpkg", "model", "submodules", "bias", "encoder", "vendored", "core", "rope", "runner",
                     "absolute_bias", "relative_bias", "positions_like", "rotary_tables", "Encoder", "Runner"],
    "instance_built": ["tickpkg", "embed", "solver", "TimeWave", "TimeConditioner", "conditions",
                       "conditions_float32"],
    "hyphen_checkout": ["odit", "models", "dit", "utils", "sampling", "DiT", "sample", "sample_float32",
                        "timestep_embedding", "heads", "time_head", "TimeHead"],
    "callers_elsewhere": ["phasepkg", "tables", "model", "head", "sincos_table", "resized_sincos_table",
                          "passed_sincos_table", "construction_angles", "forward_angles", "table_for_forward",
                          "PatchEmbed", "Head"],
}


@pytest.mark.parametrize("name", sorted(MODULE_NAMES))
def test_renaming_packages_and_modules_changes_no_finding(name, tmp_path):
    import re

    mapping = {old: f"zz{i}" for i, old in enumerate(MODULE_NAMES[name])}
    word = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    renamed_root = tmp_path / "renamed"
    for source in sorted((PROJECTS / name).rglob("*.py")):
        relative = source.relative_to(PROJECTS / name)
        parts = [mapping.get(p, p) for p in relative.with_suffix("").parts]
        target = renamed_root.joinpath(*parts).with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(word.sub(lambda m: mapping[m.group(1)], source.read_text()))
    original = tmp_path / "original"
    shutil.copytree(PROJECTS / name, original)

    def located(root):
        return sorted((word.sub(lambda m: mapping[m.group(1)], path), line, code)
                      for path, line, code, _ in _findings(root, "--no-cache", "."))

    assert located(renamed_root) == located(original) != []


def test_a_finding_at_the_linted_files_value_in_a_short_imported_module(tmp_path):
    """The rules read the linted file's nodes that another module's facts hold (the positions a
    call passed in) in the linted file's text: here they lie past the imported module's end,
    which raised IndexError when they were read in the imported module's text."""
    project = tmp_path / "split_rotary"
    shutil.copytree(PROJECTS / "split_rotary", project)
    model = project / "splitrot" / "model.py"
    model.write_text("\n" * 60 + model.read_text())
    proc = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "--output-format", "json", "."],
                          cwd=project, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert [(d["location"]["row"], d["code"]) for d in json.loads(proc.stdout)] == [(77, "POS101")]


@pytest.mark.parametrize("kind", ["nested function", "lambda"])
def test_a_function_made_in_another_module_runs_in_that_modules_text(kind, tmp_path):
    """A nested function or lambda that an imported module returns is called by the linted file;
    it still runs on its own module's text: its nodes lie past the linted file's end, which raised
    IndexError when they were read in the linted file's text (sglang's attention layers)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    maker = ("    def attend(q, bias):\n        return torch.softmax(q + bias.to(dtype=q.dtype), dim=-1)\n"
             "    return attend\n") if kind == "nested function" else \
        "    return lambda q, bias: torch.softmax(q + bias.to(dtype=q.dtype), dim=-1)\n"
    (package / "layers.py").write_text("import torch\n" + "\n" * 80 + "\n\ndef make_attention():\n" + maker)
    (package / "model.py").write_text(
        "import torch\nfrom pkg.layers import make_attention\n\n\ndef forward(q):\n"
        "    positions = torch.arange(q.shape[-1])\n"
        "    return make_attention()(q.float(), positions[None, :] * q.new_ones(8, 1)).cos()\n")
    proc = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "--output-format", "json", "pkg/model.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr


def test_a_free_function_runs_in_the_phase_of_its_callers_in_other_modules(tmp_path):
    """tables.py never calls its own functions; model.py and head.py do. A table built only by
    constructors never runs under autocast, and frequencies built only in forward never under a
    16-bit default dtype; a builder that forward also calls, or one only handed on as a value,
    keeps its findings. Linting tables.py alone finds its callers as well (pre-commit)."""
    project = tmp_path / "callers_elsewhere"
    shutil.copytree(PROJECTS / "callers_elsewhere", project)
    expected = [("phasepkg/tables.py", 22, "POS103"), ("phasepkg/tables.py", 23, "POS103"),
                ("phasepkg/tables.py", 33, "POS103"), ("phasepkg/tables.py", 34, "POS103"),
                ("phasepkg/tables.py", 40, "POS105")]
    for target in (".", "phasepkg/tables.py"):
        assert [(p, line, code) for p, line, code, _ in _findings(project, "--no-cache", target)] == expected
    # Without the project, each free function's phase is unknown: both hazards are claimed.
    alone = [(p, line, code) for p, line, code, _ in
             _findings(project, "--no-cache", "--config", "follow-imports=false", ".")]
    # (table_for_forward's helper is found through it: its own text names no frequency)
    assert alone == sorted(expected + [("phasepkg/tables.py", 11, "POS103"), ("phasepkg/tables.py", 12, "POS103"),
                                       ("phasepkg/tables.py", 47, "POS105"), ("phasepkg/tables.py", 54, "POS105")])
    # A second constructor-only caller changes nothing; one method that may run later does.
    head = project / "phasepkg" / "head.py"
    head.write_text(head.read_text().replace(
        "    def forward(self, x):",
        "    def resize(self, grid):\n"
        "        return tables.sincos_table(grid, grid, self.table.shape[-1], device=self.table.device)\n\n"
        "    def forward(self, x):"))
    assert [(p, line) for p, line, _, _ in _findings(project, "--no-cache", ".")][:2] == [
        ("phasepkg/tables.py", 11), ("phasepkg/tables.py", 12)]


def test_the_callers_found_in_other_modules_are_dependencies_of_the_cached_result(tmp_path):
    project = tmp_path / "callers_elsewhere"
    shutil.copytree(PROJECTS / "callers_elsewhere", project)
    before = _findings(project, ".")
    cache = next((project / ".poslint_cache").glob("poslint-*.json"))
    recorded = json.loads(cache.read_text())["dependencies"]
    assert any(path.endswith(os.path.join("phasepkg", "head.py")) for deps in recorded.values() for path in deps)
    # head.py's constructor-only call becomes a call from forward: tables.py's cached result is stale.
    head = project / "phasepkg" / "head.py"
    head.write_text(head.read_text().replace("    def forward(self, x):\n        return x + self.table",
                                             "    def forward(self, x):\n        return x + tables.sincos_table(4, 4, 8, device=x.device)"))
    after = _findings(project, ".")
    assert [(p, line) for p, line, _, _ in after][:2] == [("phasepkg/tables.py", 11), ("phasepkg/tables.py", 12)]
    assert len(after) == len(before) + 2


def test_test_modules_run_with_the_float32_default(tmp_path):
    """pytest runs a test module with the float32 default: the same free function that is
    reported in a model module (phase unknown: a loader may build it) is silent in a test file."""
    code = ("import torch\n\n\ndef frequencies(dim, base=10000.0):\n"
            "    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))\n"
            "    return torch.outer(torch.arange(4096).float(), inv_freq).cos()\n")
    for name in ("rope.py", "test_rope.py", "rope_test.py", "conftest.py", os.path.join("tests", "rope_cases.py")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(code)
    assert [(p, code) for p, _, code, _ in _findings(tmp_path, "--no-cache", ".")] == [("rope.py", "POS105")]
    # A test module that sets a 16-bit default itself keeps the finding.
    (tmp_path / "test_rope.py").write_text(code.replace("def frequencies", "torch.set_default_dtype(torch.bfloat16)\n\n\n"
                                                        "def frequencies"))
    assert "test_rope.py" in {p for p, _, _, _ in _findings(tmp_path, "--no-cache", ".")}


OCTAVES = '''import torch


class Octaves(torch.nn.Module):
    def __init__(self, n: int = 6, logspace: bool = True):
        super().__init__()
        if logspace:
            bands = 2.0 ** torch.arange(n, dtype=torch.float32)
        else:
            bands = torch.linspace(1.0, 2.0 ** (n - 1), n, dtype=torch.float32)
        self.register_buffer("bands", bands, persistent=False)

    def forward(self, x):
        angles = x[..., None] * self.bands
        return torch.cat([angles.sin(), angles.cos()], dim=-1)
'''


@pytest.mark.parametrize("flag, expected", [("", []), (", logspace=False", ["POS102"])])
def test_a_flag_is_settled_by_instantiations_in_a_sibling_top_package(flag, expected, tmp_path):
    # harm/ and user/ side by side at the project root (vggsfm's minipytorch3d/ and vggsfm/): user
    # builds harm's class with its octave bands (exact in 16 bits), or with the linear ones.
    for package in ("harm", "user"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "harm" / "emb.py").write_text(OCTAVES)
    (tmp_path / "user" / "model.py").write_text(
        "import torch\nfrom harm.emb import Octaves\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
        f"        super().__init__()\n        self.emb = Octaves(n=10{flag})\n\n"
        "    def forward(self, x):\n        return self.emb(x)\n")
    result = subprocess.run([sys.executable, "-m", "poslint", "--no-cache", "-j", "1", "--exit-zero",
                             "--output-format", "json", "."], capture_output=True, text=True, cwd=tmp_path)
    assert [f["code"] for f in json.loads(result.stdout)] == expected, result.stderr
