"""The command line end to end: exit codes, output, config, noqa, file discovery and fixing."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import poslint
from poslint.core.diagnostics import Edit, Fix
from poslint.edge.cli import main
from poslint.rules import all_rules
from poslint.rules.base import REGISTRY, Finding, Rule

BF16 = "import torch\n\nt = torch.arange(8, dtype=torch.bfloat16)\n"
BF16_FIXED = "import torch\n\nt = torch.arange(8, dtype=torch.float32)\n"
FP16 = "import torch\n\nt = torch.arange(8, dtype=torch.float16)\n"

# The summary's last line points at the page of the first code found.
RULE_HINT = "Run `poslint rule {}` (or any code above) for why it matters and what to write instead.\n"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(autouse=True)
def only_test_rules(monkeypatch):
    """Hide the project's real rules (POS001 stays), so these tests see only the throwaway rules."""
    for code in all_rules():
        if code != "POS001":
            monkeypatch.delitem(REGISTRY, code)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: str, text: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8"))
    return p


def pyproject(body: str) -> None:
    write("pyproject.toml", "[tool.poslint]\n" + body)


# --- exit codes and output -------------------------------------------------------------------

def test_clean_file_exits_0():
    write("ok.py", "x = 1\n")
    result = run("ok.py")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "All checks passed!\n"


def test_findings_exit_1_with_concise_output_and_summary(test_rules):
    write("a.py", BF16)
    write("b.py", FP16)
    result = run(".")
    assert result.exit_code == 1
    assert result.stdout == ("a.py:3:5: POS999 [*] positions built in bfloat16\n"
                             "b.py:3:5: POS999 positions built in float16\n")
    assert result.stderr == "Found 2 problems (1 fixable with --fix, 1 with --unsafe-fixes).\n" + RULE_HINT.format("POS999")


def test_unsafe_fixes_flag_marks_unsafe_fixes_fixable(test_rules):
    write("b.py", FP16)
    result = run("--unsafe-fixes", "b.py")
    assert result.stdout == "b.py:3:5: POS999 [*] positions built in float16\n"
    assert result.stderr == "Found 1 problem (1 fixable with --fix, 0 with --unsafe-fixes).\n" + RULE_HINT.format("POS999")


def test_exit_zero_keeps_findings_but_exits_0(test_rules):
    write("a.py", BF16)
    result = run("--exit-zero", "a.py")
    assert result.exit_code == 0
    assert "POS999" in result.stdout


def test_exit_zero_does_not_hide_errors():
    result = run("--exit-zero", "missing.py")
    assert result.exit_code == 2


def test_missing_path_exits_2_and_other_paths_are_still_linted(test_rules):
    write("a.py", BF16)
    result = run("missing_dir", "a.py")
    assert result.exit_code == 2
    assert "poslint: error: missing_dir: no such file or directory" in result.stderr
    assert "a.py:3:5: POS999" in result.stdout
    assert "All checks passed" not in result.stderr


def test_bad_option_exits_2():
    result = run("--no-such-option")
    assert result.exit_code == 2
    assert "No such option" in result.stderr


def test_unknown_output_format_exits_2():
    assert run("--output-format", "nope", ".").exit_code == 2


def test_quiet_prints_findings_only(test_rules):
    write("a.py", BF16)
    write("notes.txt", "just prose\n")
    result = run("-q", "a.py", "notes.txt")
    assert result.exit_code == 1
    assert result.stdout == "a.py:3:5: POS999 [*] positions built in bfloat16\n"
    assert result.stderr == ""


def test_syntax_error_file_is_pos001_and_run_goes_on(test_rules):
    write("bad.py", "def f(:\n    pass\n")
    write("good.py", BF16)
    result = run(".")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "bad.py:1:7: POS001 cannot parse: invalid syntax",
        "good.py:3:5: POS999 [*] positions built in bfloat16",
    ]


def test_non_utf8_file_is_pos001():
    Path("latin.py").write_bytes(b'name = "caf\xe9"\n')
    result = run("latin.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("latin.py:1:1: POS001 cannot parse: ")
    assert "Traceback" not in result.output


def test_null_byte_file_is_pos001():
    Path("nul.py").write_bytes(b"x = 1\x00\n")
    result = run("nul.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("nul.py:1:1: POS001 cannot parse: ")


def test_file_with_coding_cookie_decodes():
    Path("latin.py").write_bytes(b'# -*- coding: latin-1 -*-\nname = "caf\xe9"\n')
    assert run("latin.py").exit_code == 0


def test_unreadable_file_exits_2_and_run_goes_on(test_rules, monkeypatch):
    write("secret.py", BF16)
    write("a.py", BF16)
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("poslint.engine.linter.open", fake_open, raising=False)
    result = run("secret.py", "a.py")
    assert result.exit_code == 2
    assert "poslint: error: secret.py: cannot read: Permission denied" in result.stderr
    assert "a.py:3:5: POS999" in result.stdout


def test_rule_exception_is_internal_error_and_keeps_other_findings(test_rules, monkeypatch):
    _, half = test_rules

    def explode(self, facts):
        raise KeyError("boom")
        yield  # pragma: no cover

    monkeypatch.setattr(half, "check", explode)
    write("a.py", BF16)
    result = run("a.py")
    assert result.exit_code == 2
    assert "a.py:3:5: POS999" in result.stdout
    assert "poslint: internal error: a.py: POS998 raised KeyError: 'boom'" in result.stderr


def test_unexpected_exception_prints_internal_error_without_traceback(monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("poslint.edge.cli.discover", explode)
    result = CliRunner().invoke(main, ["."])
    assert result.exit_code == 2
    assert result.stderr == "poslint: internal error: RuntimeError: disk on fire\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


# --- commands and routing ---------------------------------------------------------------------

def test_version():
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"poslint, version {poslint.__version__}\n"


def test_explicit_check_command(test_rules):
    write("a.py", BF16)
    result = run("check", "a.py")
    assert result.exit_code == 1
    assert "a.py:3:5: POS999" in result.stdout


def test_no_arguments_lints_current_directory(test_rules):
    write("pkg/a.py", BF16)
    result = run()
    assert result.exit_code == 1
    assert result.stdout.startswith(os.path.join("pkg", "a.py") + ":3:5: POS999")


def test_rule_shows_documentation():
    result = run("rule", "POS001")
    assert result.exit_code == 0
    assert result.stdout.startswith("# cannot-parse (POS001)\n")
    assert "## Why is this bad?" in result.stdout


def test_rule_all_lists_every_rule(test_rules):
    result = run("rule", "--all")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert any(line.split() == ["POS001", "cannot-parse", "fix:", "none"] for line in lines)
    assert any(line.split() == ["POS999", "test-arange-16bit", "fix:", "always"] for line in lines)


@pytest.mark.parametrize("args", [["rule"], ["rule", "POS001", "--all"]])
def test_rule_needs_exactly_one_of_code_or_all(args):
    assert run(*args).exit_code == 2


def test_rule_unknown_code_exits_2():
    result = run("rule", "POS000")
    assert result.exit_code == 2
    assert "unknown rule code 'POS000'" in result.stderr


def test_subcommand_added_later_is_routed():
    @click.command("extra")
    @click.argument("word")
    def extra(word):
        click.echo(f"extra {word}")

    main.add_command(extra)
    try:
        result = run("extra", "hello")
    finally:
        main.commands.pop("extra")
    assert result.exit_code == 0
    assert result.stdout == "extra hello\n"


def test_python_dash_m_poslint(tmp_path):
    write("a.py", "def f(:\n")
    env = {**os.environ, "PYTHONPATH": str(Path(poslint.__file__).parent.parent)}
    version = subprocess.run([sys.executable, "-m", "poslint", "--version"], capture_output=True, text=True,
                             env=env, cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout == f"poslint, version {poslint.__version__}\n"
    lint = subprocess.run([sys.executable, "-m", "poslint", "a.py"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert lint.returncode == 1
    assert lint.stdout.startswith("a.py:1:7: POS001 cannot parse:")


# --- configuration ----------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ('selct = ["POS001"]\n', "unknown key 'selct' (did you mean 'select'?)"),
    ('select = "POS001"\n', "select: expected a list of strings, got str 'POS001'"),
    ('extend-select = [1]\n', "extend-select: expected a list of strings"),
    ('ignore = ["POS1234"]\n', "ignore: unknown rule code or prefix 'POS1234'"),
    ('select = ["NOPE"]\n', "select: unknown rule code or prefix 'NOPE'"),
    ('extend-select = ["XYZ1"]\n', "extend-select: unknown rule code or prefix 'XYZ1'"),
    ('unsafe-fixes = "yes"\n', "unsafe-fixes: expected true or false, got str 'yes'"),
    ('exclude = "build"\n', "exclude: expected a list of strings"),
    ('extend-exclude = [true]\n', "extend-exclude: expected a list of strings"),
    ('per-file-ignores = ["x"]\n', "per-file-ignores: expected a table of glob = [codes]"),
    ('per-file-ignores = { "tests/*" = "POS001" }\n', "per-file-ignores 'tests/*': expected a list of strings"),
    ('per-file-ignores = { "tests/*" = ["POSX"] }\n', "per-file-ignores 'tests/*': unknown rule code or prefix"),
    ('select = [\n', "invalid TOML"),
])
def test_config_errors_exit_2_naming_the_problem(body, message):
    pyproject(body)
    write("ok.py", "x = 1\n")
    result = run("ok.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("poslint: error: ")
    assert message in result.stderr
    assert str(Path("pyproject.toml").resolve()) in result.stderr


def test_config_table_must_be_a_table():
    write("pyproject.toml", "[tool]\nposlint = 3\n")
    result = run(".")
    assert result.exit_code == 2
    assert "expected a table, got int 3" in result.stderr


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
def test_unknown_code_on_command_line_exits_2(option):
    result = run(option, "POS1234", ".")
    assert result.exit_code == 2
    assert f"poslint: error: {option}: unknown rule code or prefix 'POS1234'" in result.stderr


def test_config_option_missing_file_exits_2():
    assert run("--config", "nope.toml", ".").exit_code == 2


def test_config_option_without_table_exits_2():
    write("other.toml", "[tool.black]\nline-length = 1\n")
    result = run("--config", "other.toml", ".")
    assert result.exit_code == 2
    assert "no [tool.poslint] table" in result.stderr


def test_config_option_is_used(test_rules):
    write("cfg/poslint.toml", '[tool.poslint]\nignore = ["POS999"]\n')
    write("a.py", BF16)
    assert run("a.py").exit_code == 1
    assert run("--config", "cfg/poslint.toml", "a.py").exit_code == 0


def test_config_ignore_and_select(test_rules):
    write("a.py", BF16 + "u = torch.arange(4).half()\n")
    pyproject('ignore = ["POS999"]\n')
    assert [line.split()[1] for line in run("a.py").stdout.splitlines()] == ["POS998"]
    pyproject('select = ["POS999"]\n')
    assert [line.split()[1] for line in run("a.py").stdout.splitlines()] == ["POS999"]


def test_prefix_and_all_select_rules(test_rules):
    write("a.py", BF16 + "u = torch.arange(4).half()\n")
    assert [line.split()[1] for line in run("--select", "POS99", "a.py").stdout.splitlines()] == ["POS999", "POS998"]
    assert [line.split()[1] for line in run("--select", "ALL", "--ignore", "POS998", "a.py").stdout.splitlines()] \
        == ["POS999"]
    assert run("--select", "POS001", "a.py").exit_code == 0


def test_command_line_select_overrides_config(test_rules):
    write("a.py", BF16)
    pyproject('ignore = ["POS999"]\n')
    assert run("a.py").exit_code == 0
    assert run("--select", "POS999", "a.py").exit_code == 1
    assert run("--extend-select", "POS999", "a.py").exit_code == 1


def test_nearest_pyproject_with_table_is_used(test_rules):
    pyproject('ignore = ["POS999"]\n')
    write("sub/pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.poslint]: passed over
    write("sub/a.py", BF16)
    assert run("sub").exit_code == 0
    write("sub/pyproject.toml", "[tool.poslint]\nselect = ['ALL']\n")
    assert run("sub").exit_code == 1


def test_unsafe_fixes_config_and_flag_override(test_rules):
    write("b.py", FP16)
    pyproject("unsafe-fixes = true\n")
    assert "[*]" in run("b.py").stdout
    assert "[*]" not in run("--no-unsafe-fixes", "b.py").stdout
    assert run("--fix", "--no-unsafe-fixes", "b.py").exit_code == 1
    assert run("--fix", "b.py").exit_code == 0
    assert Path("b.py").read_text() == BF16_FIXED


def test_per_file_ignores(test_rules):
    pyproject('per-file-ignores = { "tests/*" = ["POS99"], "legacy.py" = ["POS999"] }\n')
    write("tests/t.py", BF16)
    write("src/legacy.py", BF16)
    write("src/model.py", BF16)
    result = run(".")
    expected = os.path.join("src", "model.py") + ":3:5: POS999 [*] positions built in bfloat16"
    assert result.stdout.splitlines() == [expected]


def test_config_exclude_and_extend_exclude(test_rules):
    write("gen/a.py", BF16)
    write("build/b.py", BF16)
    write("c_pb2.py", BF16)
    pyproject('exclude = ["gen"]\n')  # replaces the defaults: build/ is linted again
    assert sorted(line.split(":")[0] for line in run(".").stdout.splitlines()) == \
        [os.path.join("build", "b.py"), "c_pb2.py"]
    pyproject('extend-exclude = ["*_pb2.py"]\n')
    assert [line.split(":")[0] for line in run(".").stdout.splitlines()] == [os.path.join("gen", "a.py")]


# --- noqa -------------------------------------------------------------------------------------

@pytest.mark.parametrize("comment, suppressed", [
    ("# noqa", True),
    ("# NOQA", True),
    ("#noqa:POS999", True),
    ("# noqa: POS999", True),
    ("# noqa: POS001,POS999", True),
    ("# noqa: POS001 POS999", True),
    ("# noqa: pos999", True),
    ("# noqa: POS99", True),
    ("# noqa: POS001", False),
    ("# type: ignore  # noqa: POS999", True),
])
def test_noqa_on_reported_line(test_rules, comment, suppressed):
    write("a.py", f"import torch\n\nt = torch.arange(8, dtype=torch.bfloat16)  {comment}\n")
    result = run("a.py")
    assert result.exit_code == (0 if suppressed else 1)
    assert run("--ignore-noqa", "a.py").exit_code == 1


def test_noqa_inside_a_string_does_not_count(test_rules):
    write("a.py", 'import torch\n\nt = (torch.arange(8, dtype=torch.bfloat16), "# noqa")\n')
    assert run("a.py").exit_code == 1


def test_noqa_applies_to_start_line_of_multiline_statement(test_rules):
    write("a.py", "import torch\n\nt = torch.arange(  # noqa: POS999\n    8, dtype=torch.bfloat16,\n)\n")
    assert run("a.py").exit_code == 0
    write("a.py", "import torch\n\nt = torch.arange(\n    8, dtype=torch.bfloat16,\n)  # noqa: POS999\n")
    assert run("a.py").exit_code == 1


def test_file_level_noqa(test_rules):
    write("a.py", "# poslint: noqa\n" + BF16 + "u = torch.arange(4).half()\n")
    assert run("a.py").exit_code == 0
    assert run("--ignore-noqa", "a.py").exit_code == 1
    write("a.py", "# poslint: noqa: POS998\n" + BF16 + "u = torch.arange(4).half()\n")
    assert [line.split()[1] for line in run("a.py").stdout.splitlines()] == ["POS999"]


def test_file_level_noqa_must_be_its_own_line(test_rules):
    write("a.py", BF16.replace("import torch", "import torch  # poslint: noqa"))
    assert run("a.py").exit_code == 1


def test_noqa_on_a_file_with_a_syntax_error():
    write("bad.py", "def f(:  # noqa: POS001\n")
    assert run("bad.py").exit_code == 0
    write("bad.py", "def f(:\n")
    assert run("bad.py").exit_code == 1


def test_noqa_suppressed_findings_are_not_fixed(test_rules):
    write("a.py", "import torch\n\nt = torch.arange(8, dtype=torch.bfloat16)  # noqa\n")
    before = Path("a.py").read_bytes()
    assert run("--fix", "a.py").exit_code == 0
    assert Path("a.py").read_bytes() == before


# --- file discovery ---------------------------------------------------------------------------

@pytest.mark.parametrize("directory", [".git", ".hg", ".venv", "venv", ".tox", "build", "dist", "__pycache__",
                                       "node_modules", "site-packages"])
def test_default_excludes(test_rules, directory):
    write(f"{directory}/a.py", BF16)
    write(f"lib/{directory}/b.py", BF16)
    assert run(".").exit_code == 0


def test_exclude_replaces_defaults_and_extend_exclude_adds(test_rules):
    write("build/a.py", BF16)
    write("gen/b.py", BF16)
    write("pkg/c.py", BF16)
    files = lambda result: sorted(line.split(":")[0] for line in result.stdout.splitlines())  # noqa: E731
    assert files(run(".")) == [os.path.join("gen", "b.py"), os.path.join("pkg", "c.py")]
    assert files(run("--exclude", "gen", ".")) == [os.path.join("build", "a.py"), os.path.join("pkg", "c.py")]
    assert files(run("--extend-exclude", "gen", "--extend-exclude", "pkg/*.py", ".")) == []


def test_explicit_excluded_file_is_linted_unless_force_exclude(test_rules):
    write("build/a.py", BF16)
    assert run("build/a.py").exit_code == 1
    result = run("--force-exclude", "build/a.py")
    assert result.exit_code == 0
    assert result.stdout == ""
    write("gen.py", BF16)
    assert run("--force-exclude", "--extend-exclude", "gen.py", "gen.py").exit_code == 0


def test_shebang_script_without_suffix_is_linted(test_rules):
    write("train", "#!/usr/bin/env python3\n" + BF16)
    result = run("train")
    assert result.exit_code == 1
    assert result.stdout.startswith("train:4:5: POS999")


def test_python_content_without_suffix_is_linted(test_rules):
    write("script", BF16)
    assert run("script").exit_code == 1


def test_non_python_file_is_skipped_with_a_note():
    write("notes.txt", "Positions in bf16 are bad.\n")
    write("run.sh", "#!/bin/bash\necho hi\n")
    write("expr", "hello\n")  # parses as Python, but has no import/def/class
    result = run("notes.txt", "run.sh", "expr")
    assert result.exit_code == 0
    for name in ("notes.txt", "run.sh", "expr"):
        assert f"poslint: note: {name}: skipped, not a Python file" in result.stderr


def test_directory_walk_ignores_non_py_files(test_rules):
    write("pkg/train", "#!/usr/bin/env python\n" + BF16)
    assert run("pkg").exit_code == 0


def test_paths_given_twice_are_linted_once(test_rules):
    write("a.py", BF16)
    result = run("a.py", "./a.py", ".")
    assert result.stdout.count("POS999") == 1


def test_directory_symlinks_are_not_followed(test_rules, tmp_path):
    outside = tmp_path / "outside"
    write("outside/a.py", BF16)
    write("proj/ok.py", "x = 1\n")
    os.symlink(outside, "proj/link")
    assert run("proj").exit_code == 0
    assert run("proj/link").exit_code == 1  # named explicitly: followed


# --- fixing -----------------------------------------------------------------------------------

def test_fix_applies_safe_fixes_and_exits_0(test_rules):
    write("a.py", BF16)
    result = run("--fix", "a.py")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "Fixed 1 problem.\n"
    assert Path("a.py").read_text() == BF16_FIXED


def test_fix_is_idempotent(test_rules):
    write("a.py", BF16 + "u = torch.arange(4, dtype=torch.bfloat16).half()\n")
    assert run("--fix", "a.py").exit_code == 0
    once = Path("a.py").read_bytes()
    mtime = os.stat("a.py").st_mtime_ns
    result = run("--fix", "a.py")
    assert result.exit_code == 0
    assert result.stderr == "All checks passed!\n"
    assert Path("a.py").read_bytes() == once
    assert os.stat("a.py").st_mtime_ns == mtime  # not rewritten


def test_overlapping_fixes_all_land_over_passes(test_rules):
    write("a.py", "import torch\n\nu = torch.arange(4, dtype=torch.bfloat16).half()\n")
    result = run("--fix", "a.py")
    assert result.exit_code == 0
    assert result.stderr == "Fixed 2 problems.\n"
    assert Path("a.py").read_text() == "import torch\n\nu = torch.arange(4, dtype=torch.float32)\n"


def test_unsafe_fix_needs_unsafe_fixes(test_rules):
    write("b.py", FP16)
    result = run("--fix", "b.py")
    assert result.exit_code == 1
    assert Path("b.py").read_text() == FP16
    assert result.stderr == "Found 1 problem (0 fixable with --fix, 1 with --unsafe-fixes).\n" + RULE_HINT.format("POS999")
    result = run("--fix", "--unsafe-fixes", "b.py")
    assert result.exit_code == 0
    assert Path("b.py").read_text() == BF16_FIXED


def test_fix_leaves_unfixable_findings_and_exits_1(test_rules):
    write("a.py", BF16)
    write("bad.py", "def f(:\n")
    result = run("--fix", ".")
    assert result.exit_code == 1
    assert result.stdout == "bad.py:1:7: POS001 cannot parse: invalid syntax\n"
    assert result.stderr == ("Fixed 1 problem.\nFound 1 problem (0 fixable with --fix, 0 with --unsafe-fixes).\n"
                             + RULE_HINT.format("POS001"))


def test_fix_adds_missing_import_once(test_rules):
    write("a.py", '"""Doc."""\nfrom torch import arange, bfloat16\n\nt = arange(8, dtype=bfloat16)\n'
                  'u = arange(4, dtype=bfloat16)\n')
    assert run("--fix", "a.py").exit_code == 0
    assert Path("a.py").read_text() == ('"""Doc."""\nfrom torch import arange, bfloat16\nimport torch\n\n'
                                        't = arange(8, dtype=torch.float32)\nu = arange(4, dtype=torch.float32)\n')


def test_fix_keeps_crlf_bom_encoding_and_mode(test_rules):
    text = "# -*- coding: latin-1 -*-\r\nfrom torch import arange, bfloat16\r\n\r\nname = 'caf\xe9'\r\n" \
           "t = arange(8, dtype=bfloat16)\r\n"
    Path("a.py").write_bytes(text.encode("latin-1"))
    os.chmod("a.py", 0o751)
    assert run("--fix", "a.py").exit_code == 0
    expected = text.replace("bfloat16)\r\n", "torch.float32)\r\n").replace(
        "bfloat16\r\n\r\n", "bfloat16\r\nimport torch\r\n\r\n")
    assert Path("a.py").read_bytes() == expected.encode("latin-1")
    assert stat.S_IMODE(os.stat("a.py").st_mode) == 0o751

    Path("b.py").write_bytes(b"\xef\xbb\xbf" + BF16.encode())
    assert run("--fix", "b.py").exit_code == 0
    assert Path("b.py").read_bytes() == b"\xef\xbb\xbf" + BF16_FIXED.encode()
    assert [p for p in os.listdir(".") if "poslint-tmp" in p] == []


def test_fix_through_symlink_writes_the_target(test_rules):
    write("real.py", BF16)
    os.symlink("real.py", "link.py")
    assert run("--fix", "link.py").exit_code == 0
    assert os.path.islink("link.py")
    assert Path("real.py").read_text() == BF16_FIXED


def test_fix_that_breaks_syntax_leaves_file_untouched(broken_rule):
    write("a.py", BF16)
    result = run("--fix", "a.py")
    assert result.exit_code == 2
    assert Path("a.py").read_text() == BF16
    assert "poslint: error: a.py: not fixed: the fixed text does not parse" in result.stderr
    assert "a.py:3:5: POS997 [*] arange call" in result.stdout


def test_diff_prints_changes_and_writes_nothing(test_rules):
    write("a.py", BF16)
    write("b.py", FP16)
    result = run("--diff", ".")
    assert result.exit_code == 1
    assert result.stdout == ("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n import torch\n \n"
                             "-t = torch.arange(8, dtype=torch.bfloat16)\n+t = torch.arange(8, dtype=torch.float32)\n")
    assert result.stderr == "Would fix 1 problem (1 more with --unsafe-fixes).\n"
    assert Path("a.py").read_text() == BF16
    assert Path("b.py").read_text() == FP16


def test_diff_without_changes_exits_0(test_rules):
    write("b.py", FP16)
    result = run("--diff", "b.py")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_diff_with_fix_still_writes_nothing(test_rules):
    write("a.py", BF16)
    assert run("--fix", "--diff", "a.py").exit_code == 1
    assert Path("a.py").read_text() == BF16


def test_fix_write_failure_exits_2(test_rules, monkeypatch):
    write("a.py", BF16)

    def refuse(path, data):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("poslint.engine.linter.write_atomic", refuse)
    result = run("--fix", "a.py")
    assert result.exit_code == 2
    assert "poslint: error: a.py: not fixed: cannot write: Permission denied" in result.stderr
    assert Path("a.py").read_text() == BF16


# --- CI guard ---------------------------------------------------------------------------------

def test_ci_without_torch_fails_loudly(tmp_path):
    blocker = tmp_path / "block"
    (blocker / "torch").mkdir(parents=True)
    (blocker / "torch" / "__init__.py").write_text("raise ImportError('torch blocked for this test')\n")
    tests_dir = Path(__file__).parent
    env = {**os.environ, "CI": "true", "PYTHONPATH": os.pathsep.join([str(blocker), str(tests_dir.parent)])}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co",
                             str(tests_dir / "test_cli.py")], capture_output=True, text=True, env=env,
                            cwd=tests_dir.parent)
    assert result.returncode == 3
    assert "CI=true but torch cannot be imported" in result.stdout + result.stderr


def test_fixes_that_never_settle_leave_file_untouched():
    class Grows(Rule):
        """Test rule whose fix always produces a new finding."""

        code = "POS996"
        name = "test-never-settles"
        summary = "Test rule whose fix never settles"
        fix_availability = "always"

        def check(self, facts):
            for node in facts.tree.body:
                yield Finding(node, "statement", Fix((Edit(0, 0, "pass\n"),), "safe", "add a statement"))

    try:
        write("a.py", "x = 1\n")
        result = run("--select", "POS996", "--fix", "a.py")
    finally:
        REGISTRY.pop("POS996", None)
    assert result.exit_code == 2
    assert "poslint: error: a.py: not fixed: fixes did not settle after 10 passes" in result.stderr
    assert Path("a.py").read_text() == "x = 1\n"
