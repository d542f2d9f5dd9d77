"""Command-line options that ruff users expect: stdin, --add-noqa, --fix-only,
--exit-non-zero-on-fix, --unfixable, --extend-per-file-ignores, --color, explain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main

EXAMPLE = (Path(__file__).resolve().parent.parent / "examples" / "llama_rope_bf16.py").read_text()
POSITIONS = "t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)"


def run(*args: str, input=None):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, input=input)


def poslint(*args: str, input=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "poslint", *args], input=input, capture_output=True,
                          timeout=120, env=env)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("POSLINT_OUTPUT_FORMAT", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


# --- stdin --------------------------------------------------------------------------------------

def test_stdin_is_linted_as_the_named_path_with_its_per_file_ignores():
    Path("pyproject.toml").write_text('[tool.poslint]\nper-file-ignores = { "gen/*" = ["POS102"] }\n')
    plain = run("--no-cache", "-", input=EXAMPLE.encode())
    assert plain.exit_code == 1
    assert {line.split()[1] for line in plain.stdout.splitlines()} == {"POS101", "POS102", "POS103"}
    assert plain.stdout.startswith("-:31:13: POS101")
    named = run("--stdin-filename", "gen/rope.py", input=EXAMPLE.encode())
    assert {line.split()[1] for line in named.stdout.splitlines()} == {"POS101", "POS103"}
    assert named.stdout.startswith("gen/rope.py:31:13:")
    assert not Path("gen").exists()  # nothing is written


def test_stdin_fix_prints_the_fixed_source_and_the_rest_on_stderr():
    done = poslint("--fix", "--stdin-filename", "rope.py", input=EXAMPLE.encode())
    fixed = done.stdout.decode()
    assert POSITIONS.replace("self.inv_freq.dtype", "torch.float32") in fixed
    assert b"rope.py:" in done.stderr and b"POS106" in done.stderr and b"Fixed 2 problems." in done.stderr
    assert done.returncode == 1  # a finding whose fix is unsafe remains
    clean = poslint("--fix", "-", input=b"x = 1\n")
    assert clean.stdout == b"x = 1\n" and clean.returncode == 0


def test_stdin_force_excluded_path_passes_the_text_through():
    Path("poslint.toml").write_text('extend-exclude = ["gen"]\n')
    done = poslint("--fix", "--force-exclude", "--stdin-filename", "gen/x.py", input=EXAMPLE.encode())
    assert done.returncode == 0 and done.stdout == EXAMPLE.encode()


def test_stdin_with_other_paths_is_a_usage_error():
    assert run("-", "a.py").exit_code == 2


# --- fixing options -----------------------------------------------------------------------------

def test_fix_only_reports_nothing_and_exits_0():
    Path("rope.py").write_text(EXAMPLE)
    result = run("--no-cache", "--fix-only", "rope.py")
    assert result.exit_code == 0 and result.stdout == ""
    assert "Fixed 2 problems." in result.stderr
    assert "torch.float32" in Path("rope.py").read_text()


def test_exit_non_zero_on_fix():
    Path("rope.py").write_text(EXAMPLE)
    assert run("--no-cache", "--fix-only", "--exit-non-zero-on-fix", "rope.py").exit_code == 1
    assert run("--no-cache", "--fix-only", "--exit-non-zero-on-fix", "rope.py").exit_code == 0  # nothing left


@pytest.mark.parametrize("how", [("--unfixable", "POS101"), ("--config", "unfixable = ['POS101']")])
def test_unfixable_rules_are_reported_without_a_fix_and_not_fixed(how):
    Path("rope.py").write_text(EXAMPLE)
    listed = run("--output-format", "json", *how, "rope.py")
    pos101 = next(item for item in json.loads(listed.stdout) if item["code"] == "POS101")
    assert pos101["fix"] is None and not pos101["fixable"]
    run("--fix", *how, "rope.py")
    fixed = Path("rope.py").read_text()
    assert POSITIONS in fixed and "enabled=False" in fixed  # POS101 kept, POS103 fixed


def test_extend_per_file_ignores_from_the_command_line():
    Path("pyproject.toml").write_text('[tool.poslint]\nper-file-ignores = { "a.py" = ["POS103"] }\n')
    Path("a.py").write_text(EXAMPLE)
    result = run("--no-cache", "--output-format", "json", "--extend-per-file-ignores", "a.py:POS101,POS102", "a.py")
    assert json.loads(result.stdout) == []
    assert run("--extend-per-file-ignores", "nocodes", "a.py").exit_code == 2


def test_add_noqa_silences_every_finding_and_keeps_existing_comments():
    text = EXAMPLE.replace(POSITIONS, POSITIONS + "  # keep me")
    Path("rope.py").write_text(text)
    result = run("--no-cache", "--add-noqa", "rope.py")
    assert result.exit_code == 0 and "Added 2 noqa directives." in result.stderr
    after = Path("rope.py").read_text()
    assert POSITIONS + "  # keep me  # noqa: POS101" in after
    assert "# noqa: POS102, POS103" in after
    assert run("--no-cache", "rope.py").exit_code == 0
    # a second run adds nothing; an existing `# noqa: CODE` is extended in place
    assert "Added 0 noqa directives." in run("--no-cache", "--add-noqa", "rope.py").stderr
    Path("rope.py").write_text(EXAMPLE.replace(POSITIONS, POSITIONS + "  # noqa: E501"))
    run("--no-cache", "--add-noqa", "rope.py")
    assert POSITIONS + "  # noqa: E501, POS101" in Path("rope.py").read_text()


def test_add_noqa_leaves_a_line_that_ends_inside_a_string():
    from poslint.core.diagnostics import Diagnostic
    from poslint.engine.add_noqa import add_noqa

    text = 'x = """a\nb"""\ny = 1 + \\\n    2\n'
    finding = Diagnostic("m.py", 1, 1, 1, 2, "POS101", "m")
    continued = Diagnostic("m.py", 3, 1, 3, 2, "POS101", "m")
    assert add_noqa(text, [finding, continued]) == (text, 0, 2)


# --- colour and explain -------------------------------------------------------------------------

def test_color_always_never_and_the_environment():
    Path("rope.py").write_text(EXAMPLE)
    assert "\x1b[" in run("--no-cache", "--color", "always", "rope.py").stdout
    assert "\x1b[" not in run("--no-cache", "--color", "never", "rope.py").stdout
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    forced = poslint("--no-cache", "rope.py", env={**env, "FORCE_COLOR": "1"})
    assert b"\x1b[" in forced.stdout
    assert b"\x1b[" not in poslint("--no-cache", "rope.py", env={**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert b"\x1b[" not in poslint("--no-cache", "rope.py", env=env).stdout  # not a terminal


def test_explain_is_rule():
    assert run("explain", "POS101").stdout == run("rule", "POS101").stdout
    assert run("explain", "--all").stdout == run("rule", "--all").stdout


def test_server_without_pygls_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "poslint.edge.server", None)
    result = CliRunner().invoke(main, ["server"])
    assert result.exit_code == 2 and "pip install 'poslint[lsp]'" in result.stderr
