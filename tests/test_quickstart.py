"""The README's quick start: `poslint examples/` reports real findings with the project's rules."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from poslint.edge.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_examples_have_real_findings(monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)
    result = CliRunner().invoke(main, ["examples/"], catch_exceptions=False)
    assert result.exit_code == 1
    codes = {line.split()[1] for line in result.stdout.splitlines()}
    assert codes and all(code.startswith("POS1") for code in codes)
    assert "examples/llama_rope_bf16.py:31:13: POS101 " in result.stdout
    assert result.stderr.startswith(f"Found {len(result.stdout.splitlines())} problems")
