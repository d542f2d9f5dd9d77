"""Rule documentation: docs/rules/*.md match the rule modules, and every docstring has ruff's headings."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]


def _load_script():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", ROOT / "scripts" / "gen_rule_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_script()


def test_docs_on_disk_match_the_rule_modules():
    problems = gen.stale()
    assert not problems, ("docs/rules is out of date with the rule docstrings: " + ", ".join(problems)
                          + "; run `python scripts/gen_rule_docs.py` and commit the result")


@pytest.mark.parametrize("code", list(all_rules()))
def test_docstring_has_the_five_ruff_headings(code):
    assert gen.missing_headings(all_rules()[code]) == []


@pytest.mark.parametrize("code", list(all_rules()))
def test_rule_command_prints_the_page(code):
    result = CliRunner().invoke(main, ["rule", code])
    assert result.exit_code == 0
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert page.endswith(result.stdout)  # the page is the command's output after the "generated" note
    rule = all_rules()[code]
    assert result.stdout.startswith(f"# {rule.name} ({code})\n")
    for heading in gen.REQUIRED_HEADINGS:
        assert f"## {heading}" in result.stdout


def test_rule_all_lists_code_name_and_fix_availability():
    result = CliRunner().invoke(main, ["rule", "--all"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(all_rules())
    for line, (code, rule) in zip(lines, all_rules().items()):
        assert line.split() == [code, rule.name, "fix:", rule.fix_availability]


def test_index_links_every_rule():
    index = (ROOT / "docs" / "rules" / "index.md").read_text(encoding="utf-8")
    for code, rule in all_rules().items():
        assert f"[{code}]({code}.md)" in index and rule.name in index


def test_headings_check_catches_a_bad_docstring():
    class Bad:
        """
        ## What it does
        Something.

        ## Example
        ...
        """

    assert gen.missing_headings(Bad) == ["Why is this bad?", "Use instead", "Fix safety"]


def test_script_check_mode_reports_stale_pages(tmp_path):
    # A copy of the docs with one page edited by hand: --check must notice, and writing must repair it.
    for path, text in gen.render().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert gen.stale(tmp_path) == []
    page = tmp_path / "docs" / "rules" / "POS101.md"
    page.write_text(page.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    (tmp_path / "docs" / "rules" / "POS999.md").write_text("gone\n", encoding="utf-8")
    assert gen.stale(tmp_path) == ["docs/rules/POS101.md", "docs/rules/POS999.md (no such rule)"]
    gen.write(tmp_path)
    assert gen.stale(tmp_path) == []


def test_script_runs_as_a_command():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rule_docs.py"), "--check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
