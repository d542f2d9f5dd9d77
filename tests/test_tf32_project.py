"""POS107's project-wide part: the pre-scan for TF32 settings (poslint/engine/project.py), the
assume-tf32 opt-in, the cache key, and the tf32-emulated verifier scenario."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.engine.project import reduced_matmul_setting, scan_reduced_matmul

ROOT = Path(__file__).resolve().parent.parent
GUARDED = ROOT / "tests" / "fixtures" / "rope" / "checker" / "ok_matmul_no_tf32_setting.py"

SETTINGS = {
    "torch.backends.cuda.matmul.allow_tf32 = True\n": "allow_tf32",
    "torch.backends.cuda.matmul.allow_tf32 = \\\n    True\n": "allow_tf32",
    "torch.backends.cuda.matmul.allow_tf32 = args.tf32\n": "allow_tf32",
    "torch.set_float32_matmul_precision('high')\n": "set_float32_matmul_precision",
    'torch.set_float32_matmul_precision("medium")\n': "set_float32_matmul_precision",
    "torch.set_float32_matmul_precision(cfg.precision)\n": "set_float32_matmul_precision",
    "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n": "fp32_precision",
    'torch.backends.fp32_precision = "tf32"\n': "fp32_precision",
    "torch.backends.mkldnn.matmul.fp32_precision = 'bf16'\n": "fp32_precision",
}
NOT_SETTINGS = [
    "torch.backends.cuda.matmul.allow_tf32 = False\n",
    "torch.backends.cudnn.allow_tf32 = True\n",
    "# torch.backends.cuda.matmul.allow_tf32 = True\n",
    'HELP = "torch.backends.cuda.matmul.allow_tf32 = True"\n',
    '"""Call torch.set_float32_matmul_precision("high") first."""\n',
    "torch.set_float32_matmul_precision('highest')\n",
    "torch.backends.cuda.matmul.fp32_precision = 'ieee'\n",
    "torch.backends.cudnn.conv.fp32_precision = 'tf32'\n",
    "if torch.backends.cuda.matmul.allow_tf32 == True:\n    pass\n",
]


@pytest.mark.parametrize("text", sorted(SETTINGS))
def test_settings_are_found(text):
    assert reduced_matmul_setting("import torch\n" + text) == (2, SETTINGS[text])


@pytest.mark.parametrize("text", NOT_SETTINGS)
def test_other_mentions_are_not_settings(text):
    assert reduced_matmul_setting("import torch\n" + text) is None


# A context manager that switches TF32 for a block and restores what it found on exit.
SWITCH = '''class Tf32Switch:
    def __init__(self, enabled):
        self.enabled = enabled
        self.previous = None

    def __enter__(self):
        self.previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = self.enabled

    def __exit__(self, *exc):
        torch.backends.cuda.matmul.allow_tf32 = self.previous
'''


def test_a_restore_and_a_switch_every_use_turns_off_set_nothing():
    assert reduced_matmul_setting("import torch\n" + SWITCH + "with Tf32Switch(False):\n    pass\n") is None
    assert reduced_matmul_setting("import torch\n" + SWITCH + "with Tf32Switch(enabled=0):\n    pass\n") is None
    restored = "import torch\nprev = torch.backends.cuda.matmul.allow_tf32\ntorch.backends.cuda.matmul.allow_tf32 = prev\n"
    assert reduced_matmul_setting(restored) is None


def test_a_switch_some_use_turns_on_is_a_setting():
    text = "import torch\n" + SWITCH + "with Tf32Switch(False):\n    pass\nwith Tf32Switch(True):\n    pass\n"
    assert reduced_matmul_setting(text) == (9, "allow_tf32")
    assert reduced_matmul_setting("import torch\n" + SWITCH) == (9, "allow_tf32")  # no use here: any value


def test_line_numbers_survive_multiline_strings():
    text = '"""\nline\nline\n"""\nimport torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n'
    assert reduced_matmul_setting(text) == (6, "allow_tf32")


def test_notebook_cells_are_scanned(tmp_path):
    notebook = {"cells": [{"cell_type": "markdown", "source": ["allow_tf32 = True"]},
                          {"cell_type": "code", "source": ["import torch\n",
                                                           "torch.set_float32_matmul_precision('high')\n"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert scan_reduced_matmul([str(path)]).reason_for(str(path)) == f"{path} sets set_float32_matmul_precision on line 2"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_CACHE_DIR", raising=False)
    shutil.copy(GUARDED, tmp_path / "model.py")
    (tmp_path / "train.py").write_text("import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
                                       encoding="utf-8")
    return tmp_path


def pos107(*args):
    result = CliRunner().invoke(main, ["check", "--output-format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return [(d["filename"], d["message"]) for d in json.loads(result.stdout) if d["code"] == "POS107"]


def test_a_setting_in_another_file_of_the_run_counts(project):
    found = pos107("--no-cache", "model.py", "train.py")
    assert len(found) == 1 and found[0][0].endswith("model.py")
    assert "train.py sets allow_tf32 on line 3" in found[0][1]
    assert pos107("--no-cache", "model.py") == []


def _packages(project, *folders):
    """Make ``folders`` packages of the project, and move its guarded model into ``pkg/rotary/``."""
    for folder in folders:
        (project / folder).mkdir()
        (project / folder / "__init__.py").write_text("", encoding="utf-8")
    shutil.move(project / "model.py", project / "pkg" / "rotary" / "model.py")


def test_a_setting_reaches_its_part_of_the_tree(project):
    # A multi-model server: one model's loader sets TF32 in the process that runs that model only.
    (project / "train.py").unlink()
    _packages(project, "pkg", "pkg/chat", "pkg/rotary", "pkg/registry")
    # (a registry imports every model; the loader's helper imports the registry, the loader runs one model)
    (project / "pkg" / "registry" / "models.py").write_text("from pkg.rotary.model import GuardedRotary\n",
                                                            encoding="utf-8")
    (project / "pkg" / "chat" / "helpers.py").write_text("from pkg.registry import models\n", encoding="utf-8")
    loader = ("import torch\nfrom .helpers import models\n\n\nclass ChatModel:\n    def load(self):\n"
              "        torch.set_float32_matmul_precision('high')\n")
    (project / "pkg" / "chat" / "loader.py").write_text(loader, encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    # ... the model it imports itself is reached
    (project / "pkg" / "chat" / "loader.py").write_text(loader.replace(".helpers import models",
                                                                       "pkg.rotary import model"), encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert path.endswith("model.py") and "loader.py sets set_float32_matmul_precision on line 7" in message
    # ... and a launcher elsewhere reaches the folder that holds it and what it imports: the models
    # under it, whether an import shows them or a registry builds them.
    (project / "pkg" / "chat" / "loader.py").unlink()
    (project / "scripts").mkdir()
    (project / "scripts" / "train.py").write_text(
        "import torch\nimport pkg.chat.helpers\n\n\ndef main():\n    torch.backends.cuda.matmul.allow_tf32 = True\n",
        encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert "train.py sets allow_tf32 on line 6" in message
    # A helper that sets it runs where it is called: a file that imports it reaches its own part.
    (project / "scripts" / "train.py").unlink()
    (project / "pkg" / "chat" / "tf32.py").write_text(
        "import torch\n\n\ndef enable_tf32():\n    torch.backends.cuda.matmul.allow_tf32 = True\n", encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    (project / "pkg" / "arguments.py").write_text(
        "from pkg.chat.tf32 import enable_tf32\n\n\nclass Arguments:\n    def setup(self):\n        enable_tf32()\n",
        encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert path.endswith("model.py") and "tf32.py sets allow_tf32 on line 5" in message


def test_a_model_that_sets_it_reaches_only_what_it_runs(project):
    # A model server: one model turns TF32 on for its own worker process. Under the old reach, the
    # folder holding it and the shared module it imports (pkg/) took in every other model.
    (project / "train.py").unlink()
    _packages(project, "pkg", "pkg/rotary", "pkg/voice")
    (project / "pkg" / "common.py").write_text("WIDTH = 4\n", encoding="utf-8")
    (project / "pkg" / "base.py").write_text("from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
                                             encoding="utf-8")
    decoder = project / "pkg" / "voice" / "decoder.py"
    model = ("import torch\nfrom torch import nn\nfrom pkg import common\n\n\nclass Decoder(nn.Module):\n"
             "    def __init__(self):\n        super().__init__()\n        torch.set_float32_matmul_precision('high')\n")
    decoder.write_text(model, encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    # ... a model deriving from the project's own base module alike
    decoder.write_text(model.replace("from pkg import common", "from pkg.base import Base")
                       .replace("Decoder(nn.Module)", "Decoder(Base)"), encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    # ... and a helper that only the model calls
    helper = ("import torch\nfrom torch import nn\nfrom pkg import common\n\n\ndef _enable():\n"
              "    torch.backends.cuda.matmul.allow_tf32 = True\n\n\nclass Decoder(nn.Module):\n"
              "    def forward(self, x):\n        _enable()\n        return x\n")
    decoder.write_text(helper, encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    # The model reaches what it imports.
    decoder.write_text(model.replace("from pkg import common", "from pkg.rotary import model"), encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert path.endswith("model.py") and "decoder.py sets set_float32_matmul_precision on line 9" in message
    # Near-misses: the helper also run at import, or the setting in a class that is no module
    # (a trainer of whatever model it is given), reaches the folder as a launcher does.
    decoder.write_text(helper + "\n\n_enable()\n", encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert "decoder.py sets allow_tf32 on line 7" in message
    decoder.write_text(model.replace("Decoder(nn.Module)", "Trainer"), encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert "decoder.py sets set_float32_matmul_precision on line 9" in message


def test_a_trainer_reaches_the_models_it_imports(project):
    # A trainer (no torch module) that imports the models it builds runs those and what they
    # import: not the other models of the package, beside the utilities it also imports.
    (project / "train.py").unlink()
    _packages(project, "pkg", "pkg/rotary", "pkg/video", "pkg/trainer")
    (project / "pkg" / "common.py").write_text("WIDTH = 4\n", encoding="utf-8")
    video = project / "pkg" / "video" / "model.py"
    video.write_text("from torch import nn\nfrom pkg import common\n\n\nclass VideoModel(nn.Module):\n    pass\n",
                     encoding="utf-8")
    (project / "pkg" / "trainer" / "train.py").write_text(
        "import torch\nfrom pkg import common\nfrom pkg.video.model import VideoModel\n\n\nclass Trainer:\n"
        "    def __init__(self):\n        torch.backends.cuda.matmul.allow_tf32 = True\n        self.model = VideoModel()\n",
        encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    # ... the models those models import are reached
    video.write_text("from torch import nn\nfrom pkg.rotary.model import GuardedRotary\n\n\nclass VideoModel(nn.Module):\n"
                     "    pass\n", encoding="utf-8")
    [(path, message)] = pos107("--no-cache", ".")
    assert path.endswith("rotary/model.py") and "train.py sets allow_tf32 on line 8" in message


def test_assume_tf32_reports_without_a_setting(project):
    (project / "train.py").unlink()
    assert pos107("--no-cache", ".") == []
    [(_, message)] = pos107("--no-cache", "--assume-tf32", ".")
    assert "assume-tf32 is set" in message
    (project / "pyproject.toml").write_text("[tool.poslint]\nassume-tf32 = true\n", encoding="utf-8")
    assert len(pos107("--no-cache", ".")) == 1
    assert pos107("--no-cache", "--no-assume-tf32", ".") == []


def test_the_cache_follows_the_setting_in_another_file(project):
    assert len(pos107(".")) == 1
    assert len(pos107(".")) == 1  # warm
    (project / "train.py").write_text("import torch\n", encoding="utf-8")
    assert pos107(".") == []  # model.py is unchanged, but its cached finding is not reused
    (project / "train.py").write_text("import torch\ntorch.set_float32_matmul_precision('high')\n",
                                      encoding="utf-8")
    [(_, message)] = pos107(".")
    assert "train.py sets set_float32_matmul_precision on line 2" in message


def test_tf32_rounding_keeps_11_significant_bits():
    torch = pytest.importorskip("torch")
    from poslint.runtime.modes import round_to_tf32

    x = torch.tensor([2047.0, 2048.0, 2049.0, 2051.0, 8191.0, -8191.0, 1 + 2**-11, 1 + 3 * 2**-11, float("inf")])
    expected = [2047.0, 2048.0, 2048.0, 2052.0, 8192.0, -8192.0, 1.0, 1 + 2**-9, float("inf")]
    assert round_to_tf32(x).tolist() == expected


def test_tf32_emulation_rounds_gemms_only():
    torch = pytest.importorskip("torch")
    from poslint.runtime.modes import Tf32Matmuls

    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 128, 2, dtype=torch.float32) / 128))
    positions = torch.arange(8192, dtype=torch.float32)
    exact = inv_freq[None, :, None] * positions[None, None, :]
    with Tf32Matmuls():
        gemm = inv_freq[None, :, None] @ positions[None, None, :]
        broadcast = inv_freq[None, :, None] * positions[None, None, :]
        einsum = torch.einsum("i,j->ij", inv_freq, positions)
    assert torch.equal(inv_freq[None, :, None] @ positions[None, None, :], exact)  # no TF32: identical
    assert torch.equal(broadcast, exact) and torch.equal(einsum, exact[0])
    assert torch.unique(gemm[0, 0]).numel() == 4097  # frequency 1: the positions themselves


def test_a_run_without_pos107_does_not_scan(project, monkeypatch):
    import poslint.edge.cli as cli

    def refuse(paths):
        raise AssertionError("scanned")

    monkeypatch.setattr(cli, "scan_reduced_matmul", refuse)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--ignore", "POS107", "."])
    assert result.exit_code == 0, result.output


def test_the_scan_never_opens_a_named_pipe_for_reading(tmp_path):
    import os

    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    setting = tmp_path / "train.py"
    setting.write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", encoding="utf-8")
    scan = scan_reduced_matmul([str(fifo), str(setting)])
    assert scan.reason_for(str(fifo)) == f"{setting} sets allow_tf32 on line 2"


def test_a_setting_in_a_test_does_not_count(project):
    # pytest runs the test under TF32; the model's training runs do not
    (project / "train.py").unlink()
    (project / "tests").mkdir()
    (project / "tests" / "bench.py").write_text("import torch\ntorch.set_float32_matmul_precision('high')\n",
                                               encoding="utf-8")
    (project / "test_speed.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
                                           encoding="utf-8")
    assert pos107("--no-cache", ".") == []
    (project / "train.py").write_text("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
                                      encoding="utf-8")
    assert len(pos107("--no-cache", ".")) == 1


# A helper that sets what its caller passes, defaulting to off (torch-pointcloud's set_determinism).
PINNING_HELPER = '''import torch


def set_determinism(seed, *, tf32: bool = False):
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = tf32
'''


def test_a_helper_parameter_defaulting_to_off_sets_only_where_a_call_turns_it_on():
    assert reduced_matmul_setting(PINNING_HELPER) is None  # no call: the default holds
    assert reduced_matmul_setting(PINNING_HELPER + "set_determinism(0)\nset_determinism(1, tf32=False)\n") is None
    assert reduced_matmul_setting(PINNING_HELPER + "set_determinism(0, tf32=True)\n") == (6, "allow_tf32")
    assert reduced_matmul_setting(PINNING_HELPER + "set_determinism(0, **options)\n") == (6, "allow_tf32")
    # without a default, a helper nobody calls here may be called with anything
    unknown = PINNING_HELPER.replace("tf32: bool = False", "tf32: bool")
    assert reduced_matmul_setting(unknown) == (6, "allow_tf32")
    assert reduced_matmul_setting(unknown + "set_determinism(0, tf32=0)\n") is None
    # a method's first parameter is bound: the flag is the call's first argument
    method = ("import torch\n\n\nclass Runtime:\n    def configure(self, tf32=False):\n"
              "        torch.backends.cuda.matmul.allow_tf32 = tf32\n\n\n")
    assert reduced_matmul_setting(method + "Runtime().configure(False)\n") is None
    assert reduced_matmul_setting(method + "Runtime().configure(True)\n") == (6, "allow_tf32")


def test_a_helper_called_with_tf32_on_in_another_file_sets_it(project):
    (project / "train.py").write_text("import torch\n", encoding="utf-8")
    (project / "determinism.py").write_text(PINNING_HELPER, encoding="utf-8")
    assert pos107("--no-cache", "model.py", "train.py", "determinism.py") == []
    (project / "train.py").write_text("from determinism import set_determinism\n\nset_determinism(0, tf32=True)\n",
                                      encoding="utf-8")
    found = pos107("--no-cache", "model.py", "train.py", "determinism.py")
    assert len(found) == 1 and "determinism.py sets allow_tf32 on line 6" in found[0][1]
