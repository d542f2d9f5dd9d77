"""Jupyter notebooks: code cells are linted, IPython syntax is skipped, and --fix changes only cell sources.

Notebooks are built with nbformat (as Jupyter writes them) or by hand as JSON in other styles.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from poslint.edge.cli import main
from poslint.integrations.notebook import is_ipython_line, mask_ipython, restore_masked, source_spans

ROOT = Path(__file__).resolve().parents[1]
BUGGY = (ROOT / "examples" / "llama_rope_bf16.py").read_text(encoding="utf-8")
IMPORTS = "import torch\nfrom torch import nn\n"
CLASS = BUGGY.split(IMPORTS, 1)[1]  # the example without its docstring and imports
MAGICS = "%matplotlib inline\n!pip install --quiet torch\n"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLINT_OUTPUT_FORMAT", raising=False)
    return tmp_path


def build(path: str = "rope.ipynb") -> Path:
    """A notebook as Jupyter writes it: markdown, magics, outputs, a %%bash cell, the buggy class."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.0"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# RoPE in bf16\nSee `poslint`."),
        nbformat.v4.new_code_cell(MAGICS + IMPORTS, execution_count=1, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="Requirement already satisfied: torch\n")]),
        nbformat.v4.new_code_cell("%%bash\necho 'torch.arange(8, dtype=torch.bfloat16)'\n", execution_count=2),
        nbformat.v4.new_code_cell(CLASS.rstrip("\n"), execution_count=3, outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
                                   metadata={"needs_background": "light"})]),
        nbformat.v4.new_code_cell("rope = load_for_inference()\nrope?\n%time rope(torch.ones(1), 8)"),
    ]
    target = Path(path)
    nbformat.write(nb, str(target))
    return target


def class_position(code: str):
    """Where the example reports ``code``, as (row, col) within CLASS."""
    offset = BUGGY[:BUGGY.index(CLASS)].count("\n")
    for line in run("--select", code, str(ROOT / "examples" / "llama_rope_bf16.py")).stdout.splitlines():
        _, row, col, _ = line.split(":", 3)
        return int(row) - offset, int(col)


def splice_back(old: str, new: str, cell: int) -> str:
    """``new`` with cell ``cell``'s source value replaced by the one in ``old``."""
    a, b = source_spans(old)[cell - 1], source_spans(new)[cell - 1]
    return new[:b.start] + old[a.start:a.end] + new[b.end:]


# --- finding and reporting ---------------------------------------------------------------------

def test_findings_are_reported_as_path_cell_line_col():
    build()
    result = run("rope.ipynb")
    assert result.exit_code == 1
    row, col = class_position("POS101")
    lines = result.stdout.splitlines()
    assert lines[0] == (f"rope.ipynb:cell 4:{row}:{col}: POS101 [*] positions take the dtype of buffer 'inv_freq'; "
                        "after model.to(torch.bfloat16) only 897 of 8192 positions stay distinct in bfloat16")
    assert [line.split(": ")[1].split()[0] for line in lines] == ["POS101", "POS103", "POS102"]
    assert all(line.startswith("rope.ipynb:cell 4:") for line in lines)  # not in the %%bash cell


def test_magic_lines_keep_the_rows_and_columns_of_the_code_after_them():
    source = MAGICS + "!echo hi\n" + IMPORTS + CLASS
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, "m.ipynb")
    Path("m.py").write_text(source.replace("%", "#").replace("!", "#"), encoding="utf-8")
    ours = [line.split(":", 1)[1] for line in run("m.py").stdout.splitlines()]
    theirs = [line.split(":", 2)[2] for line in run("m.ipynb").stdout.splitlines()]
    assert ours and theirs == ours


@pytest.mark.parametrize("line", ["%time f()", "%%timeit", "!ls -la", "  !pip install x", "?torch.arange",
                                  "torch.arange?", "torch.arange??", "files = !ls", "t = %timeit -o f()",
                                  "pip install -U -q matplotlib", "cd ..", "time f()"])
def test_ipython_lines_are_recognised(line):
    assert is_ipython_line(line)


@pytest.mark.parametrize("line", ["x = 1", "# %time", "y = a % b", "print('!')", "z = x if a else b", "",
                                  "ls - x", "pip = 3", "time.sleep(1)", "cd in dirs"])
def test_python_lines_are_not_masked(line):
    assert not is_ipython_line(line)


def test_masking_keeps_lengths_and_parses_in_blocks():
    source = "for i in range(3):\n    !echo $i \\\n        more\nx = 1\nobj?\n"
    text, masked = mask_ipython(source)
    assert [len(a) for a in text.splitlines()] == [len(b) for b in source.splitlines()]
    assert sorted(masked) == [1, 2, 4]
    compile(text, "<cell>", "exec")
    restored, _ = restore_masked(text, text.replace("x = 1", "x = 2"), masked)
    assert restored == source.replace("x = 1", "x = 2")
    with pytest.raises(ValueError):
        restore_masked(text, text.replace("0", "1", 1), masked)


def test_non_python_cell_magics_are_skipped_and_python_ones_checked():
    assert mask_ipython("%%bash\nrm -rf /tmp/x\n") is None
    assert mask_ipython("%%writefile x.py\nimport os\n") is None
    text, masked = mask_ipython("%%time\nx = 1\n")
    assert masked == {0: "%%time\n"} and text.endswith("x = 1\n")


def test_a_cell_that_does_not_parse_is_pos001_and_the_others_are_still_checked():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def f(:\n    pass"), nbformat.v4.new_code_cell(IMPORTS + CLASS)]
    nbformat.write(nb, "bad.ipynb")
    lines = run("bad.ipynb").stdout.splitlines()
    assert lines[0].startswith("bad.ipynb:cell 1:1:") and " POS001 cannot parse: " in lines[0]
    assert any(line.startswith("bad.ipynb:cell 2:") and " POS101 " in line for line in lines)


def test_invalid_json_is_pos001():
    Path("broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    result = run("broken.ipynb")
    assert result.exit_code == 1
    assert result.stdout.startswith("broken.ipynb:1:1: POS001 cannot parse: not a notebook: invalid JSON")


def test_non_python_notebooks_are_skipped():
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    nb.cells = [nbformat.v4.new_code_cell(IMPORTS + CLASS)]
    nbformat.write(nb, "r.ipynb")
    result = run("r.ipynb")
    assert result.exit_code == 0 and result.stdout == ""


def test_noqa_works_in_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("# poslint: noqa: POS1\n" + IMPORTS + CLASS)]
    nbformat.write(nb, "q.ipynb")
    assert run("q.ipynb").exit_code == 0


def test_directories_include_notebooks_but_not_checkpoints():
    os.makedirs("nbs/.ipynb_checkpoints")
    build("nbs/rope.ipynb")
    build("nbs/.ipynb_checkpoints/rope-checkpoint.ipynb")
    paths = {line.split(":")[0] for line in run(".").stdout.splitlines()}
    assert paths == {os.path.join("nbs", "rope.ipynb")}


def test_json_output_has_the_cell():
    build()
    items = json.loads(run("--output-format", "json", "rope.ipynb").stdout)
    row, col = class_position("POS101")
    first = items[0]
    assert (first["filename"], first["cell"], first["location"], first["code"]) == (
        "rope.ipynb", 4, {"row": row, "column": col}, "POS101")
    (edit,) = first["fix"]["edits"]
    line = CLASS.splitlines()[edit["location"]["row"] - 1]
    assert line[edit["location"]["column"] - 1:edit["end_location"]["column"] - 1] == "self.inv_freq.dtype"


# --- fixing ------------------------------------------------------------------------------------

def test_fix_changes_only_the_source_of_the_edited_cell():
    path = build()
    before = path.read_text(encoding="utf-8")
    result = run("--fix", "--unsafe-fixes", "rope.ipynb")
    assert result.exit_code == 0, result.output
    after = path.read_text(encoding="utf-8")
    assert after != before
    # Every byte outside cell 4's source is unchanged: outputs, metadata, key order, indentation.
    assert splice_back(before, after, 4) == before
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[1].source == MAGICS + IMPORTS  # magics untouched
    assert nb.cells[3].outputs[0]["data"]["image/png"] == "iVBORw0KGgo="
    # The cell is fixed exactly as the same code in a .py file would be.
    Path("same.py").write_text(IMPORTS + CLASS, encoding="utf-8")
    assert run("--fix", "--unsafe-fixes", "same.py").exit_code == 0
    assert IMPORTS + nb.cells[3].source + "\n" == Path("same.py").read_text(encoding="utf-8")
    # Fixed for good.
    again = run("--fix", "--unsafe-fixes", "rope.ipynb")
    assert again.exit_code == 0 and path.read_text(encoding="utf-8") == after


def test_diff_shows_cells_and_writes_nothing():
    path = build()
    before = path.read_bytes()
    result = run("--diff", "rope.ipynb")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/rope.ipynb:cell 4\n+++ b/rope.ipynb:cell 4\n")
    assert "-        t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)\n" \
        in result.stdout
    assert path.read_bytes() == before


def test_fix_keeps_a_hand_written_style():
    # Two-space indent, unusual key order, a source given as one string, CRLF line endings in the
    # JSON, no final newline, non-ASCII text kept raw, and a magic line in the edited cell.
    cell_source = "%load_ext autoreload\n" + IMPORTS + "# Positions — bf16\n" + CLASS
    text = ('{\r\n  "nbformat": 4,\r\n  "nbformat_minor": 2,\r\n  "metadata": {"z": 1, "a": [1, 2]},\r\n'
            '  "cells": [\r\n    {\r\n      "source": ' + json.dumps(cell_source, ensure_ascii=False)
            + ',\r\n      "cell_type": "code",\r\n      "outputs": [{"output_type": "stream", "name": "stdout", '
            '"text": "é\\n"}],\r\n      "metadata": {},\r\n      "execution_count": 7\r\n    }\r\n  ]\r\n}')
    Path("hand.ipynb").write_bytes(text.encode("utf-8"))
    result = run("--fix", "hand.ipynb")
    assert result.stderr.startswith("Fixed 2 problems.")
    after = Path("hand.ipynb").read_bytes().decode("utf-8")
    assert after != text
    assert splice_back(text, after, 1) == text
    new_source = json.loads(after)["cells"][0]["source"]
    assert isinstance(new_source, str)
    assert new_source.startswith("%load_ext autoreload\n") and "# Positions — bf16\n" in new_source


def test_list_sources_keep_their_layout(tmp_path):
    from poslint.integrations.notebook import serialise_source

    old = '[\n    "a\\n",\n    "b"\n   ]'
    assert serialise_source("x\ny\nz", old, False) == '[\n    "x\\n",\n    "y\\n",\n    "z"\n   ]'
    assert serialise_source("x\ny", '["a\\n", "b"]', False) == '["x\\n", "y"]'
    assert serialise_source("é", '"a"', True) == '"\\u00e9"'
    assert serialise_source("é", '"a"', False) == '"é"'


@pytest.mark.parametrize("content", [
    b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
    b'{"cells": [{"cell_type": "code", "metadata": {}, "outputs": []}], "nbformat": 4}',
    b'{"cells": [1, "x", null], "nbformat": 4}',
    b'{"cells": [{"cell_type": "code", "source": "%%time\\n"}, {"cell_type": "code", "source": "!ls"}], "nbformat": 4}',
    b'{"cells": [{"cell_type": "code", "source": "x = 1"}], "metadata": {"language_info": "python"}, "nbformat": 4}',
    b'{"cells": [{"cell_type": "code", "source": [1, 2]}], "nbformat": 4}',
    b'{"worksheets": [{"cells": []}], "nbformat": 3}',
    b'[1, 2]',
    b'{"cells": [], "x": "\xe9"}',
    b"[" * 100000 + b"]" * 100000,
])
def test_odd_notebooks_never_crash(content):
    Path("odd.ipynb").write_bytes(content)
    result = run("--fix", "odd.ipynb")
    assert result.exit_code in (0, 1), result.output
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    if result.exit_code == 1:
        assert result.stdout.startswith("odd.ipynb:1:1: POS001 cannot parse: not a notebook: ")


def test_bom_is_kept_when_fixing():
    Path("bom.ipynb").write_bytes(b"\xef\xbb\xbf" + json.dumps(
        {"cells": [{"cell_type": "code", "metadata": {}, "source": IMPORTS + CLASS}], "nbformat": 4}).encode())
    assert run("--fix", "bom.ipynb").stderr.startswith("Fixed ")
    data = Path("bom.ipynb").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and "dtype=torch.float32" in json.loads(data[3:])["cells"][0]["source"]
