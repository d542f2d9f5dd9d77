"""Property tests (issue 9): random RoPE and ALiBi modules, and random Python.

The modules come from a small grammar of the patterns the rules look for: positions built with
``arange`` (in 16-bit, in the buffer's dtype, in float32, cast later), frequencies in a buffer,
an attribute, a parameter or a local, the angle product as ``einsum``, ``outer``, ``@``,
``matmul`` or a broadcast ``*``, with or without ``autocast(enabled=False)``, cos/sin cast or
not; ALiBi slopes from ``pow``, ``**`` or a list, times absolute, relative or cumsum positions.
Around them: random names, ``import torch as T`` aliases, nesting in classes and functions,
comments, blank lines, continuation lines, tabs or spaces, LF or CRLF.

For every module: the analysis never raises (no internal error), every fix parses, fixing is
idempotent, and fixing never raises the number of findings. ``hypothesmith``'s random Python
must not crash poslint either.

``POSLINT_FUZZ_EXAMPLES`` raises the number of examples (CI runs the default).
"""

from __future__ import annotations

import ast
import keyword
import os
from dataclasses import dataclass, field
from typing import List

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from poslint.engine.linter import LintOptions, lint_bytes
from poslint.rules import all_rules

EXAMPLES = int(os.environ.get("POSLINT_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.data_too_large])
CODES = frozenset(all_rules())
RESERVED = {"self", "torch", "nn", "math", "x", "T", "th", "F", "dim", "base", "seq_len", "device", "dtype",
            "cos", "sin", "emb", "q", "k", "print", "range", "len", "int", "float", "super", "list", "slopes"}


# --- a tiny code builder ---------------------------------------------------------------------

@dataclass
class Code:
    """Lines with a nesting level each; rendered with a chosen indentation and line ending."""

    lines: List[tuple] = field(default_factory=list)

    def add(self, level: int, text: str) -> None:
        self.lines.append((level, text))

    def render(self, indent: str, newline: str) -> str:
        return "".join((indent * level + text if text else "") + newline for level, text in self.lines)


identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not keyword.issoftkeyword(s) and s not in RESERVED)
class_names = st.from_regex(r"[A-Z][A-Za-z0-9]{0,9}", fullmatch=True).filter(lambda s: s not in ("T", "F"))
comments = st.sampled_from(["# rotary embedding", "# type: ignore", "# noqa", "# TODO(someone): bf16?",
                            "# ünïcödé → θ", "#", "# dtype=torch.bfloat16 in a comment", "# fmt: off"])


@st.composite
def module_prelude(draw):
    torch_alias = draw(st.sampled_from(["torch", "T", "th"]))
    imports = ["import torch" if torch_alias == "torch" else f"import torch as {torch_alias}"]
    nn_style = draw(st.sampled_from(["from", "alias", "attr"]))
    if nn_style == "from":
        imports.append("from torch import nn")
        nn = "nn"
    elif nn_style == "alias":
        imports.append("import torch.nn as nn")
        nn = "nn"
    else:
        nn = f"{torch_alias}.nn"
    if draw(st.booleans()):
        imports.insert(0, "import math")
    if draw(st.booleans()):
        imports.insert(0, "from __future__ import annotations")
    return torch_alias, nn, imports


def dtype_choices(t: str, freq_ref: str):
    return st.sampled_from([f"{t}.bfloat16", f"{t}.float16", f"{t}.half", f"{t}.float32", f"{t}.float",
                            "x.dtype", f"{freq_ref}.dtype", None])


@st.composite
def rope_body(draw, t: str, freq_ref: str, level: int, code: Code):
    """Lines that compute cos/sin from ``freq_ref`` inside a function taking (x, seq_len)."""
    positions = draw(identifiers)
    angles = draw(identifiers.filter(lambda n: n != positions))
    dtype = draw(dtype_choices(t, freq_ref))
    arange = f"{t}.arange(seq_len, device=x.device" + (f", dtype={dtype})" if dtype else ")")
    positions_expr = draw(st.sampled_from([
        arange,
        f"{t}.arange(seq_len, device=x.device).type_as({freq_ref})",
        f"{t}.arange(0, seq_len).to({dtype or 'x.dtype'})",
        f"{t}.arange(seq_len).float()",
        f"{t}.arange(seq_len).half()",
        f"{t}.arange(seq_len, dtype={t}.int64).to(x.device) / 1.0",
    ]))
    if draw(st.booleans()):  # continuation lines inside the brackets
        positions_expr = positions_expr.replace("(seq_len, ", "(\n        seq_len,\n        ", 1)
    assignment = draw(st.sampled_from(["{} = {}", "{}: {t}.Tensor = {}", "{} = ({})", "offset = 0; {} = {}"]))
    for i, part in enumerate(assignment.replace("{t}", t).format(positions, positions_expr).split("\n")):
        code.add(level if i == 0 else level + 1, part.strip())
    freqs_expr = draw(st.sampled_from([freq_ref, f"{freq_ref}.float()", f"{freq_ref}.to(x.device)"]))
    product = draw(st.sampled_from([
        f'{t}.einsum("i,j->ij", {positions}, {freqs_expr})',
        f"{t}.outer({positions}, {freqs_expr})",
        f"{positions}[:, None] * {freqs_expr}[None, :]",
        f"{positions}.unsqueeze(-1) @ {freqs_expr}.unsqueeze(0)",
        f"{t}.matmul({positions}[:, None], {freqs_expr}[None, :])",
        f"({positions}[:, None] * {freqs_expr}[None, :])",
    ]))
    autocast = draw(st.sampled_from([None, f"with {t}.autocast(device_type=x.device.type, enabled=False):",
                                     f"with {t}.cuda.amp.autocast(enabled=False):",
                                     f"with {t}.autocast('cuda', enabled=False):"]))
    inner = level
    if autocast:
        code.add(level, autocast)
        inner = level + 1
    if draw(st.booleans()):
        code.add(inner, draw(comments))
    code.add(inner, draw(st.sampled_from([  # where the product sits: the fixes must cope with each
        f"{angles} = {product}",
        f"{angles}: {t}.Tensor = {product}",
        f"scale = 1.0; {angles} = {product}",
        f"{angles} = ({product})",
        f"{angles} = {product} if seq_len else {product}",
        f"{angles} = unused = {product}",
        f"if True: {angles} = {product}",
        f"{angles} = {t}.cat([{product}], dim=0)",
    ])))
    code.add(inner, f"emb = {t}.cat(({angles}, {angles}), dim=-1)")
    if draw(st.booleans()):
        code.add(level, "")
    cast = draw(st.sampled_from(["", ".to(x.dtype)", ".to(dtype=x.dtype)", ".type_as(x)", ".float()", ".half()",
                                 f".to({t}.bfloat16)"]))
    code.add(level, f"return emb.cos(){cast}, emb.sin(){cast}")


@st.composite
def rope_modules(draw):
    t, nn, imports = draw(module_prelude())
    code = Code()
    for line in imports:
        code.add(0, line)
    code.add(0, "")
    code.add(0, "")
    outer = draw(st.sampled_from(["module", "function", "class"]))  # where the rotary class lives
    level = 0
    if outer == "function":
        code.add(0, f"def {draw(identifiers)}(config):")
        level = 1
    elif outer == "class":
        code.add(0, f"class {draw(class_names)}:")
        code.add(1, '"""A container, as some model files have."""')
        level = 1
    name = draw(class_names)
    code.add(level, f"class {name}({nn}.Module):")
    if draw(st.booleans()):
        code.add(level + 1, '"""Rotary position embedding."""')
    freq_name = draw(st.sampled_from(["inv_freq", "freqs", "inv_freq_local", "theta_inv"]) | identifiers)
    code.add(level + 1, "def __init__(self, dim, base=10000):")
    code.add(level + 2, "super().__init__()")
    freq_expr = draw(st.sampled_from([
        f"1.0 / (base ** ({t}.arange(0, dim, 2).float() / dim))",
        f"1.0 / (base ** ({t}.arange(0, dim, 2, dtype={t}.float32) / dim))",
        f"base ** (-{t}.arange(0, dim, 2) / dim)",
        f"1.0 / (base ** ({t}.arange(0, dim, 2) / dim))",
        f"1.0 / {t}.pow(base, {t}.arange(0, dim, 2).float() / dim)",
    ]))
    code.add(level + 2, f"{freq_name} = {freq_expr}")
    storage = draw(st.sampled_from(["buffer", "buffer_np", "attribute", "parameter", "local"]))
    if storage == "buffer":
        code.add(level + 2, f'self.register_buffer("{freq_name}", {freq_name})')
    elif storage == "buffer_np":
        code.add(level + 2, f'self.register_buffer("{freq_name}", {freq_name}, persistent=False)')
    elif storage == "attribute":
        code.add(level + 2, f"self.{freq_name} = {freq_name}")
    elif storage == "parameter":
        code.add(level + 2, f"self.{freq_name} = {nn}.Parameter({freq_name}, requires_grad=False)")
    else:
        code.add(level + 2, "self.dim, self.base = dim, base")
    code.add(level + 2, "")
    method = draw(st.sampled_from(["forward", "_cos_sin", "get_cos_sin"]))
    decorator = draw(st.sampled_from([None, f"@{t}.no_grad()", f"@{t}.autocast('cuda', enabled=False)"]))
    if decorator:
        code.add(level + 1, decorator)
    code.add(level + 1, f"def {method}(self, x, seq_len):")
    if storage == "local":
        code.add(level + 2, f"{freq_name} = 1.0 / (self.base ** ({t}.arange(0, self.dim, 2).float() / self.dim))")
        freq_ref = freq_name
    else:
        freq_ref = f"self.{freq_name}"
    draw(rope_body(t, freq_ref, level + 2, code))
    if method != "forward":
        code.add(level + 1, "")
        code.add(level + 1, "def forward(self, x):")
        code.add(level + 2, f"return self.{method}(x, x.shape[-2])")
    if outer == "function":
        code.add(1, f"return {name}(config.head_dim)")
    if draw(st.booleans()):  # a functional variant too, at module level
        code.add(0, "")
        code.add(0, "")
        code.add(0, f"def {draw(identifiers)}(x, seq_len, inv_freq):")
        draw(rope_body(t, "inv_freq", 1, code))
    return code


@st.composite
def alibi_modules(draw):
    t, nn, imports = draw(module_prelude())
    code = Code()
    for line in ["import math"] + [i for i in imports if i != "import math"]:
        code.add(0, line)
    code.add(0, "")
    code.add(0, "")
    slopes_fn = draw(identifiers)
    code.add(0, f"def {slopes_fn}(n):")
    slopes_expr = draw(st.sampled_from([
        f"{t}.pow(2, -8.0 * {t}.arange(1, n + 1) / n)",
        f"2 ** (-8.0 / n * {t}.arange(1, n + 1))",
        f"{t}.tensor([2 ** (-8.0 * (i + 1) / n) for i in range(n)])",
        f"{t}.tensor([2 ** (-(2 ** -(math.log2(n) - 3))) ** (i + 1) for i in range(n)], dtype={t}.float32)",
        f"1.0 / {t}.pow(2, {t}.arange(1, n + 1, dtype={t}.float32).mul(8.0 / n))",
    ]))
    code.add(1, f"return {slopes_expr}")
    code.add(0, "")
    code.add(0, "")
    builder = draw(identifiers.filter(lambda n: n != slopes_fn))
    code.add(0, f"def {builder}(attention_mask, num_heads, dtype):")
    if draw(st.booleans()):
        code.add(1, draw(comments))
    dtype = draw(st.sampled_from([f"{t}.bfloat16", f"{t}.float16", f"{t}.float32", "dtype", None]))
    positions = draw(st.sampled_from([
        "(attention_mask.cumsum(dim=-1) - 1) * attention_mask",
        f"{t}.arange(attention_mask.shape[-1], device=attention_mask.device"
        + (f", dtype={dtype})" if dtype else ")"),
        f"{t}.arange(attention_mask.shape[-1])[None, :] - {t}.arange(attention_mask.shape[-1])[:, None]",
        f"{t}.arange(1 - attention_mask.shape[-1], 1, dtype={t}.int32)",
    ]))
    code.add(1, f"positions = {positions}")
    code.add(1, f"slopes = {slopes_fn}(num_heads)")
    code.add(1, draw(st.sampled_from(["alibi = slopes[:, None] * positions[None, :]",
                                      "alibi = slopes[..., None] * positions",
                                      "alibi = positions[None, :] * slopes[:, None]",
                                      f"alibi = {t}.einsum('h,k->hk', slopes, positions.float())"])))
    cast = draw(st.sampled_from(["alibi.to(dtype)", f"alibi.to({t}.bfloat16)", "alibi", "alibi.half()",
                                 "alibi.to(dtype=attention_mask.dtype)"]))
    code.add(1, f"return {cast}")
    if draw(st.booleans()):
        code.add(0, "")
        code.add(0, "")
        code.add(0, f"class {draw(class_names)}({nn}.Module):")
        code.add(1, "def __init__(self, num_heads):")
        code.add(2, "super().__init__()")
        buffer = f"{slopes_fn}(num_heads)"
        code.add(2, draw(st.sampled_from([f'self.register_buffer("slopes", {buffer})',
                                          f"self.slopes = {buffer}"])))
        code.add(1, "")
        code.add(1, "def forward(self, x, attention_mask):")
        code.add(2, f"return {builder}(attention_mask, self.slopes.shape[0], x.dtype)")
    return code


@st.composite
def sources(draw, modules):
    code = draw(modules)
    indent = draw(st.sampled_from(["    ", "  ", "\t", "        "]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = code.render(indent, newline)
    if draw(st.booleans()):
        text = "#!/usr/bin/env python" + newline + '"""Generated model file."""' + newline + text
    return text


# --- the properties --------------------------------------------------------------------------

def lint(text: str, fix: bool, unsafe: bool = False):
    options = LintOptions(codes=CODES, fix=fix, unsafe_fixes=unsafe)
    result, source, fixed = lint_bytes(text.encode("utf-8"), "generated.py", options)
    return result, fixed


def check_properties(text: str, unsafe: bool) -> None:
    note(text)
    ast.parse(text)  # the generator makes valid Python
    before, _ = lint(text, fix=False)
    assert not before.internal_errors, before.internal_errors
    assert not any(d.code == "POS001" for d in before.diagnostics)
    result, fixed = lint(text, fix=True, unsafe=unsafe)
    assert not result.internal_errors, result.internal_errors
    assert not result.errors, result.errors  # no fix was refused: each one parsed and settled
    if fixed is None:
        return
    note(fixed)
    ast.parse(fixed)
    after, refixed = lint(fixed, fix=True, unsafe=unsafe)
    assert refixed is None, "fixing again changed the text"
    assert not after.errors and not after.internal_errors
    remaining, _ = lint(fixed, fix=False)
    assert len(remaining.diagnostics) <= len(before.diagnostics), "the fix raised the number of findings"


@FUZZ
@given(text=sources(rope_modules()), unsafe=st.booleans())
def test_random_rope_modules(text, unsafe):
    check_properties(text, unsafe)


@FUZZ
@given(text=sources(alibi_modules()), unsafe=st.booleans())
def test_random_alibi_modules(text, unsafe):
    check_properties(text, unsafe)


def test_the_grammar_reaches_the_rules():
    """The generators are worth running only if their modules set off the rules: check that a
    fixed sample of them has findings of most rules."""
    seen = set()

    @settings(max_examples=150, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(text=st.one_of(sources(rope_modules()), sources(alibi_modules())))
    def collect(text):
        seen.update(d.code for d in lint(text, fix=False)[0].diagnostics)

    collect()
    assert {"POS101", "POS102", "POS103", "POS201"} <= seen, seen


hypothesmith = pytest.importorskip("hypothesmith")


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@settings(max_examples=max(50, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(text=hypothesmith.from_grammar())
def test_random_python_never_crashes_poslint(text):
    note(text)
    for fix in (False, True):
        result, fixed = lint(text, fix=fix, unsafe=True)
        assert not result.internal_errors, result.internal_errors
        assert not result.errors, result.errors
        if fixed is not None:
            ast.parse(fixed)
