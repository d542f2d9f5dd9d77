"""Each file is linted with the configuration closest to it, as in ruff: nested projects,
`extend`, poslint.toml, `--config KEY=VALUE`, `--show-settings`, `--show-files`, .gitignore."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main

EXAMPLE = (Path(__file__).resolve().parent.parent / "examples" / "llama_rope_bf16.py").read_text()
ALL_CODES = {"POS101", "POS102", "POS103"}  # what the example has


def run(*args: str, input: bytes = None):
    return CliRunner().invoke(main, ["--no-cache", *args] if args and args[0] not in ("explain", "rule") else list(args),
                              catch_exceptions=False, input=input)


def write(path: str, text: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def codes(result) -> dict:
    """{filename: set of codes} from json output."""
    found: dict = {}
    for item in json.loads(result.stdout):
        found.setdefault(item["filename"], set()).add(item["code"])
    return found


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_OUTPUT_FORMAT", raising=False)
    return tmp_path


@pytest.fixture
def nested():
    """A root project that ignores POS102 and a nested one that extends it and ignores POS103 too."""
    write("pyproject.toml", '[tool.poslint]\nignore = ["POS102"]\n')
    write("top.py", EXAMPLE)
    write("sub/pyproject.toml", '[tool.poslint]\nextend = "../pyproject.toml"\nignore = ["POS103"]\n')
    write("sub/inner.py", EXAMPLE)
    write("other/poslint.toml", 'select = ["POS103"]\n')
    write("other/o.py", EXAMPLE)


def test_each_file_uses_its_closest_configuration(nested):
    result = run("--output-format", "json", ".")
    assert codes(result) == {"top.py": {"POS101", "POS103"}, "sub/inner.py": {"POS101"},
                             "other/o.py": {"POS103"}}


def test_the_result_of_a_file_does_not_depend_on_the_files_passed_with_it(nested):
    together = codes(run("--output-format", "json", "top.py", "sub/inner.py", "other/o.py"))
    alone = {}
    for name in ("top.py", "sub/inner.py", "other/o.py"):
        alone.update(codes(run("--output-format", "json", name)))
    assert together == alone == codes(run("--output-format", "json", "sub", "top.py", "other"))


def test_a_file_run_from_inside_the_nested_project_keeps_its_settings(nested, monkeypatch):
    monkeypatch.chdir("sub")
    assert codes(run("--output-format", "json", "inner.py")) == {"inner.py": {"POS101"}}


def test_dot_poslint_toml_wins_over_pyproject_in_the_same_directory():
    write("pyproject.toml", '[tool.poslint]\nselect = ["POS101"]\n')
    write(".poslint.toml", 'select = ["POS102"]\n')
    write("m.py", EXAMPLE)
    assert codes(run("--output-format", "json", "m.py")) == {"m.py": {"POS102"}}


def test_pyproject_without_the_table_is_passed_over():
    write("pyproject.toml", '[tool.poslint]\nselect = ["POS101"]\n')
    write("pkg/pyproject.toml", "[tool.black]\nline-length = 100\n")
    write("pkg/m.py", EXAMPLE)
    assert codes(run("--output-format", "json", "pkg")) == {"pkg/m.py": {"POS101"}}


def test_globs_are_relative_to_the_file_that_wrote_them():
    """per-file-ignores and excludes of an extended file start from that file's directory."""
    write("pyproject.toml", '[tool.poslint]\nper-file-ignores = { "sub/gen_*.py" = ["ALL"] }\n'
                            'extend-exclude = ["sub/skipped.py"]\n')
    write("sub/poslint.toml", 'extend = "../pyproject.toml"\nextend-per-file-ignores = { "quiet.py" = ["POS1"] }\n')
    for name in ("gen_a.py", "skipped.py", "quiet.py", "loud.py"):
        write(f"sub/{name}", EXAMPLE)
    assert codes(run("--output-format", "json", ".")) == {"sub/loud.py": ALL_CODES}


def test_extend_cycle_and_missing_base_are_errors():
    write("a/poslint.toml", 'extend = "../b/poslint.toml"\n')
    write("b/poslint.toml", 'extend = "../a/poslint.toml"\n')
    write("a/m.py", EXAMPLE)
    result = run("a/m.py")
    assert result.exit_code == 2 and "`extend` forms a cycle" in result.stderr
    write("c/poslint.toml", 'extend = "nowhere.toml"\n')
    write("c/m.py", EXAMPLE)
    result = run("c")
    assert result.exit_code == 2 and "extend: no such file" in result.stderr


def test_a_bad_nested_configuration_is_reported_with_its_path():
    write("sub/poslint.toml", 'selec = ["POS1"]\n')
    write("sub/m.py", EXAMPLE)
    result = run(".")
    assert result.exit_code == 2
    assert "sub/poslint.toml: unknown key 'selec' (did you mean 'select'?)" in result.stderr
    assert "Traceback" not in result.output


def test_config_key_value_overrides_every_configuration(nested):
    result = run("--output-format", "json", "--config", 'select = ["POS102"]', ".")
    assert codes(result) == {"top.py": {"POS102"}, "sub/inner.py": {"POS102"}, "other/o.py": {"POS102"}}
    result = run("--output-format", "json", "--config", "extend-select = ['POS102']", "--config",
                 "unsafe-fixes = true", "sub")
    assert codes(result) == {"sub/inner.py": {"POS101", "POS102"}}
    assert all(item["fixable"] for item in json.loads(result.stdout))


@pytest.mark.parametrize("arg, message", [
    ("select = POS1", "neither a file nor a valid KEY = VALUE"),
    ("selct = ['POS1']", "unknown key 'selct'"),
    ("select = ['POS9']", "unknown rule code or prefix 'POS9'"),
    ("extend = 'x.toml'", "`extend` cannot be given on the command line"),
    ("missing.toml", "--config missing.toml: no such file"),
])
def test_bad_config_arguments_exit_2(arg, message):
    write("m.py", EXAMPLE)
    result = run("--config", arg, "m.py")
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_config_path_applies_to_every_file(nested):
    write("fixed.toml", 'select = ["POS102"]\n')
    result = run("--output-format", "json", "--config", "fixed.toml", ".")
    assert codes(result) == {"top.py": {"POS102"}, "sub/inner.py": {"POS102"}, "other/o.py": {"POS102"}}
    write("a.toml", "")
    assert "at most one configuration file" in run("--config", "fixed.toml", "--config", "a.toml", ".").stderr


def test_show_settings_names_the_files_and_the_rules(nested):
    result = run("--show-settings", "sub/inner.py")
    assert result.exit_code == 0
    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in result.stdout.splitlines())
    assert str(Path("sub/pyproject.toml").resolve()) in result.stdout
    assert str(Path("pyproject.toml").resolve()) in result.stdout  # what it extends
    assert lines["rules enabled"].split(", ") == ["POS001", "POS101", "POS104", "POS105", "POS106", "POS107",
                                                   "POS201", "POS202", "POS301"]
    assert lines["extends"] == str(Path("pyproject.toml").resolve())


def test_show_files_lists_what_would_be_linted(nested):
    write("build/gen.py", EXAMPLE)
    write("stubs/m.pyi", "x: int\n")
    write("notes.txt", "no\n")
    result = run("--show-files", ".")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["other/o.py", "stubs/m.pyi", "sub/inner.py", "top.py"]


def test_a_nested_exclude_applies_only_below_it():
    write("pyproject.toml", "[tool.poslint]\n")
    write("gen/keep.py", EXAMPLE)
    write("sub/poslint.toml", 'extend-exclude = ["gen"]\n')
    write("sub/gen/skip.py", EXAMPLE)
    assert run("--show-files", ".").stdout.splitlines() == ["gen/keep.py"]
    # pre-commit passes names: --force-exclude applies the exclude of the file's own configuration
    result = run("--force-exclude", "--show-files", "sub/gen/skip.py", "gen/keep.py")
    assert result.stdout.splitlines() == ["gen/keep.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_is_respected_in_walks_unless_told_otherwise():
    subprocess.run(["git", "init", "-q", "."], check=True)
    write(".gitignore", "generated/\n*_tmp.py\n!keep_tmp.py\n")
    write("pkg/.gitignore", "local.py\n")
    for name in ("generated/g.py", "a_tmp.py", "keep_tmp.py", "pkg/local.py", "pkg/m.py", "m.py"):
        write(name, "x = 1\n")
    walked = run("--show-files", ".").stdout.splitlines()
    assert walked == ["keep_tmp.py", "m.py", "pkg/m.py"]
    everything = run("--show-files", "--no-respect-gitignore", ".").stdout.splitlines()
    assert len(everything) == 6
    write("poslint.toml", "respect-gitignore = false\n")
    assert len(run("--show-files", ".").stdout.splitlines()) == 6
    # a file named on the command line is linted even if ignored
    assert run("--show-files", "a_tmp.py").stdout.splitlines() == ["a_tmp.py"]


def test_gitignore_outside_a_work_tree_changes_nothing():
    write(".gitignore", "*.py\n")
    write("m.py", "x = 1\n")
    assert run("--show-files", ".").stdout.splitlines() == ["m.py"]
