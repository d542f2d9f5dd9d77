"""``poslint --fix --unsafe-fixes`` over the whole fixture tree: every output parses, a second run
changes nothing, and no finding is left (every finding in the fixtures has a fix)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from click.testing import CliRunner

from poslint.edge.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_fix_twice_over_the_fixture_tree(tmp_path):
    for family in ("rope", "alibi"):
        shutil.copytree(FIXTURES / family / "checker", tmp_path / family, ignore=shutil.ignore_patterns("*.txt"))
    args = ["check", "--no-cache", "--fix", "--unsafe-fixes", str(tmp_path)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output  # nothing left to report
    fixed = {p: p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.py")}
    for path, text in fixed.items():
        ast.parse(text, filename=str(path))
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    assert {p: p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.py")} == fixed
    changed = sum(text != (FIXTURES / p.parent.name / "checker" / p.name).read_text(encoding="utf-8")
                  for p, text in fixed.items())
    assert changed >= 25  # the buggy fixtures were fixed
