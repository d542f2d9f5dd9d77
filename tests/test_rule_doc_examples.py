"""The rule pages are true when copied: each page's *Example* block, saved as a file exactly as
shown, triggers that rule when poslint lints it, and its *Use instead* block is silent (no finding
of any rule). The blocks are complete modules with their imports, so they also run: the test
executes each one and calls the rotary embedding or ALiBi function it defines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
CODES = list(all_rules())


def section(page: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", page, flags=re.M | re.S)
    assert match, heading
    return match.group(1)


def python_block(page: str, heading: str) -> str:
    """The one ```python block under ``heading``, as a reader would copy it."""
    blocks = re.findall(r"^```python\n(.*?)^```$", section(page, heading), flags=re.M | re.S)
    assert len(blocks) == 1, f"{heading}: expected one python block, found {len(blocks)}"
    return blocks[0]


def page(code: str) -> str:
    return (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")


def findings(tmp_path: Path, name: str, source: str) -> list:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "json", str(path)],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def run_module(source: str) -> None:
    """Execute a block and call what it defines, on a small CPU input."""
    import torch

    namespace: dict = {}
    exec(compile(source, "<rule page>", "exec"), namespace)  # noqa: S102 - the docs' own code
    if "RotaryEmbedding" in namespace:
        cos, sin = namespace["RotaryEmbedding"](8)(torch.zeros(2, dtype=torch.bfloat16), 16)
        assert cos.shape == sin.shape == (16, 8)
    elif "alibi_bias" in namespace:
        bias = namespace["alibi_bias"](4, torch.zeros(1, 16, 8))
        assert bias.shape[0] == 4 and bias.shape[-1] == 16
    elif "rope" in namespace:
        assert namespace["rope"](1) == 1
    else:
        raise AssertionError(f"the block defines nothing this test knows how to call: {sorted(namespace)}")


@pytest.mark.parametrize("code", CODES)
def test_example_triggers_the_rule(code, tmp_path):
    example = python_block(page(code), "Example")
    assert code in {f["code"] for f in findings(tmp_path, "example.py", example)}
    if code != "POS001":  # POS001's example is the syntax error it reports
        run_module(example)


@pytest.mark.parametrize("code", CODES)
def test_use_instead_is_silent(code, tmp_path):
    instead = python_block(page(code), "Use instead")
    assert findings(tmp_path, "instead.py", instead) == []
    run_module(instead)


def test_a_block_that_is_not_complete_is_caught(tmp_path):
    # The snippets the pages used to show: without their surroundings poslint sees no RoPE.
    snippet = ("t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)\n"
               "freqs = torch.outer(t, self.inv_freq)\n")
    assert findings(tmp_path, "snippet.py", snippet) == []
    with pytest.raises(NameError):
        run_module(snippet)
