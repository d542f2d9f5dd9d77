"""The flake8 plugin, run through the real flake8 on the rule fixtures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "llama_rope_bf16.py"
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+)(?: \[\*\])? (?P<message>.*)$")


def flake8(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # --isolated: no flake8 configuration files, so only the arguments here count.
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def poslint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "poslint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**__import__("os").environ, "POSLINT_OUTPUT_FORMAT": "concise"})


def findings(output: str):
    found = []
    for line in output.splitlines():
        match = LINE.match(line)
        if match and match["code"].startswith("POS"):
            found.append((Path(match["path"]).as_posix(), int(match["line"]), int(match["col"]), match["code"],
                          match["message"]))
    return sorted(found)


def fixture_files():
    files = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/fixtures/*/checker/*.py"))
    # flake8 reports files it cannot parse as E999 and runs no plugin on them; POS001 is poslint's.
    return [f for f in files if "POS001" not in (ROOT / f).with_suffix(".txt").read_text(encoding="utf-8")
            if (ROOT / f).with_suffix(".txt").exists()]


def test_plugin_is_registered():
    result = flake8("--version")
    assert result.returncode == 0
    assert "poslint" in result.stdout


def test_flake8_reports_the_same_findings_as_poslint_on_the_fixtures():
    files = fixture_files()
    assert len(files) > 20
    ours = poslint("--ignore-noqa", "--exit-zero", "-q", *files)
    theirs = flake8("--select", "POS", "--disable-noqa", *files)
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode in (0, 1), theirs.stderr
    # POS107 differs by design: one poslint run is one project, so a TF32 setting in one fixture
    # counts for all of them, while flake8 checks each file on its own (compared below).
    expected = [f for f in findings(ours.stdout) if f[3] != "POS107"]
    assert len(expected) > 20  # the fixtures have real findings
    # Same files, lines, 1-based columns, codes and messages.
    assert [f for f in findings(theirs.stdout) if f[3] != "POS107"] == expected


def test_flake8_reports_pos107_where_the_file_sets_tf32_itself():
    files = [f for f in fixture_files() if "tf32" in f]
    assert len(files) >= 3
    ours = [f for name in files for f in findings(poslint("--exit-zero", "-q", name).stdout)]
    theirs = findings(flake8("--select", "POS", *files).stdout)
    assert any(f[3] == "POS107" for f in ours)
    assert sorted(theirs) == sorted(ours)


def test_flake8_line_matches_poslint_concise_line():
    ours = poslint(str(EXAMPLE.relative_to(ROOT)))
    theirs = flake8("--select", "POS", str(EXAMPLE.relative_to(ROOT)))
    assert theirs.returncode == 1
    assert theirs.stdout.splitlines() == [line.replace(" [*]", "") for line in ours.stdout.splitlines()]
    assert theirs.stdout.startswith("examples/llama_rope_bf16.py:31:13: POS101 ")


def test_flake8_handles_noqa_and_its_own_selection(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")
    marked = text.replace("dtype=self.inv_freq.dtype)\n", "dtype=self.inv_freq.dtype)  # noqa: POS101\n", 1)
    assert marked != text
    (tmp_path / "rope.py").write_text(marked, encoding="utf-8")
    codes = lambda result: [f[3] for f in findings(result.stdout)]  # noqa: E731
    assert codes(flake8("--select", "POS", "rope.py", cwd=tmp_path)) == ["POS103", "POS102"]
    assert codes(flake8("--select", "POS", "--disable-noqa", "rope.py", cwd=tmp_path)) == ["POS101", "POS103",
                                                                                           "POS102"]
    assert codes(flake8("--select", "POS", "--extend-ignore", "POS103", "rope.py", cwd=tmp_path)) == ["POS102"]
    (tmp_path / "setup.cfg").write_text("[flake8]\nper-file-ignores = rope.py:POS102\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "POS", "rope.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert codes(result) == ["POS103"]


def test_plugin_uses_the_lines_flake8_gives():
    import ast

    from poslint.integrations.flake8_plugin import Plugin

    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    results = list(Plugin(ast.parse("".join(lines)), lines, "/nonexistent/rope.py").run())
    assert [(line, col, text.split()[0]) for line, col, text, _ in results] == [
        (31, 12, "POS101"), (32, 16, "POS103"), (32, 43, "POS102")]
    assert all(kind is Plugin for *_, kind in results)


@pytest.mark.parametrize("source", ["x = 1\n", "import torch\nt = torch.arange(8, dtype=torch.float32)\n"])
def test_clean_code_is_silent(tmp_path, source):
    (tmp_path / "ok.py").write_text(source, encoding="utf-8")
    result = flake8("--select", "POS", "ok.py", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == ""


def test_flake8_follows_imports_into_the_project(tmp_path):
    """A finding that needs two files (the positions' dtype in model.py, the product in
    layers/rotary.py) is reported by flake8 too, as by poslint."""
    import shutil

    project = tmp_path / "split_rotary"
    shutil.copytree(ROOT / "tests" / "fixtures" / "projects" / "split_rotary", project)
    result = flake8("--select", "POS", "splitrot/model.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("splitrot/model.py:17:21: POS101 ")
    assert "(in splitrot/layers/rotary.py, reached by the call on line 18)" in result.stdout
