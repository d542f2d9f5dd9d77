"""docs/precision.md holds the table that scripts/precision_table.py measures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_script():
    return _load("precision_table")


def test_doc_table_is_the_measured_table():
    script = load_script()
    doc = (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")
    assert f"{script.BEGIN}\n{script.table()}\n{script.END}" in doc


def test_table_matches_the_published_figures():
    script = load_script()
    row_8192 = next(line for line in script.table().splitlines() if line.startswith("| 8192 |"))
    assert row_8192 == "| 8192 | 10.9% | 50.0% | 897 | 4097 |"
    assert script.survivors(257, torch.bfloat16)[0] == 257  # 0..256 all exact


def test_write_doc_rewrites_only_the_table(tmp_path):
    script = load_script()
    page = tmp_path / "page.md"
    page.write_text(f"before\n{script.BEGIN}\nstale\n{script.END}\nafter\n", encoding="utf-8")
    script.write_doc(page)
    assert page.read_text(encoding="utf-8") == f"before\n{script.BEGIN}\n{script.table()}\n{script.END}\nafter\n"


def test_plot_sits_beside_the_doc():
    assert (ROOT / "docs" / "img" / "precision.png").stat().st_size > 10_000
    assert "img/precision.png" in (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")


def load_conversion_script():
    return _load("conversion_facts")


def test_doc_conversion_table_is_the_measured_table():
    script = load_conversion_script()
    doc = (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")
    assert f"{script.BEGIN}\n{script.table()}\n{script.END}" in doc


def test_module_to_drops_the_imaginary_part_of_a_complex_buffer_and_half_keeps_it():
    table = load_conversion_script().table()
    row = next(line for line in table.splitlines() if line.startswith("| `module.to(torch.bfloat16)`"))
    assert "imaginary part (sin) is dropped" in row and "torch.int64" in row
    assert "torch.complex64 (values kept)" in next(line for line in table.splitlines()
                                                   if line.startswith("| `module.half()`"))


def test_doc_error_tables_are_the_measured_tables():
    script = _load("rope_alibi_error")
    doc = (ROOT / "docs" / "precision.md").read_text(encoding="utf-8")
    assert f"{script.BEGIN}\n{script.table()}\n{script.END}" in doc


def test_the_quoted_figures_are_measured():
    table = _load("rope_alibi_error").table()
    assert "| 3.14 | 89% | 261 |" in table  # pi, and 897 of 8192 distinct positions
    assert "(POS106) | 3.14 | 0% | 818 |" in table  # more than 1 rad from position 818
    assert "(Bloom-like) | 3 | 10.9 |" in table


def test_matrix_products_need_one_dtype_where_einsum_and_outer_promote():
    # docs/precision.md and the interpreter's SAME_DTYPE_PRODUCTS rest on this.
    positions = torch.arange(8.0).bfloat16()
    frequencies = torch.ones(4)
    for product in (lambda: positions[:, None] @ frequencies[None],
                    lambda: torch.mm(positions[:, None], frequencies[None]),
                    lambda: torch.matmul(positions[:, None], frequencies[None]),
                    lambda: torch.bmm(positions[None, :, None], frequencies[None, None])):
        with pytest.raises(RuntimeError):
            product()
    with pytest.raises(RuntimeError):  # an einsum that sums over an axis is a matrix product
        torch.einsum("nk,kd->nd", positions.view(4, 2), frequencies.view(2, 2))
    assert torch.einsum("i,j->ij", positions, frequencies).dtype == torch.float32
    assert torch.outer(positions, frequencies).dtype == torch.float32


def test_octave_bands_survive_16_bit_conversion_and_scaled_ones_do_not():
    # The lattice's ``dyadic`` (powers of two of whole exponents) rests on this: POS102 skips them.
    from torch import nn

    bands = 12
    holder = nn.Module()
    holder.register_buffer("octaves", 2.0 ** torch.arange(bands))
    holder.register_buffer("spread", 2 ** torch.linspace(0, bands - 1, steps=bands))
    holder.register_buffer("scaled", 3.14159 * 2.0 ** torch.arange(bands))
    before = {name: buffer.clone() for name, buffer in holder.named_buffers()}
    for dtype in (torch.bfloat16, torch.float16):
        converted = {name: buffer.float() for name, buffer in holder.to(dtype).named_buffers()}
        holder.to(torch.float32).load_state_dict(before)
        assert torch.equal(converted["octaves"], before["octaves"])
        assert torch.equal(converted["spread"], before["spread"])
        assert not torch.equal(converted["scaled"], before["scaled"])


def test_fsdp2_casts_float_arguments_of_a_sharded_forward_and_leaves_buffers():
    script = load_conversion_script()
    cast = script._sharded_forward({"param_dtype": torch.bfloat16})
    assert cast["argument"].dtype == torch.bfloat16 and cast["argument"].unique().numel() == 1
    assert cast["ids"] == torch.int64 and cast["weight"] == torch.bfloat16
    assert cast["frequencies"].dtype == torch.float32
    kept = script._sharded_forward({"param_dtype": torch.bfloat16, "cast_forward_inputs": False})
    assert kept["argument"].dtype == torch.float32
