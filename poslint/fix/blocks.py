"""Building blocks for the rules' fixes: span edits computed from ``ast`` nodes.

Every edit replaces the exact span of one node (or inserts at one point), so a fix never
touches text outside its own span; comments and formatting elsewhere are kept byte for byte.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from poslint.analysis import ModuleFacts
from poslint.analysis.names import canonical
from poslint.core.diagnostics import Edit, Fix

# Parameter names that carry sizes, scalars or options, not tensors: never a device source.
_NOT_TENSORS = re.compile(r"^(self|cls|dtype|n|d|k)$|(^|_)(size|len|length|seqlen|dim|dims|num|count|base|"
                          r"theta|scale|scaling|factor|offset|start|end|step|max|min|heads|pct|ratio|kwargs|args)"
                          r"($|_)")


def torch_attr(facts: ModuleFacts, name: str) -> Tuple[str, Tuple[str, ...]]:
    """How to spell ``torch.<name>`` in this file's import style, and the import that needs
    adding: ``T.float32`` after ``import torch as T``, ``float32`` (from torch) in a file that
    only uses ``from torch import ...``, ``torch.float32`` plus ``import torch`` otherwise."""
    for alias, target in facts.names.aliases.items():
        if canonical(target) == f"torch.{name}":
            return alias, ()
    for alias, target in facts.names.aliases.items():
        if target == "torch":
            return f"{alias}.{name}", ()
    if any(target.startswith("torch.") for target in facts.names.aliases.values()):
        return name, (f"from torch import {name}",)
    return f"torch.{name}", ("import torch",)


def replace(facts: ModuleFacts, node: ast.AST, text: str) -> Edit:
    start, end = facts.span(node)
    return Edit(start, end, text)


def insert_after(facts: ModuleFacts, node: ast.AST, text: str) -> Edit:
    _, end = facts.span(node)
    return Edit(end, end, text)


def atom(facts: ModuleFacts, node: ast.AST) -> str:
    """The source of ``node``, parenthesised when a method call could not follow it directly."""
    src = facts.source(node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List,
                         ast.Tuple, ast.Dict, ast.ListComp)):
        return src
    return f"({src})"


def keyword(call: ast.Call, name: str) -> Optional[ast.keyword]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def set_dtype_float32(facts: ModuleFacts, call: ast.Call) -> List[Edit]:
    """``f(..., dtype=X)`` -> ``f(..., dtype=torch.float32)``; adds the keyword when missing."""
    float32, _ = torch_attr(facts, "float32")
    existing = keyword(call, "dtype")
    if existing is not None:
        return [replace(facts, existing.value, float32)]
    last = (call.args + call.keywords)[-1] if (call.args or call.keywords) else None
    if last is None:
        start, end = facts.span(call)
        close = facts.text.rindex(")", start, end)
        return [Edit(close, close, f"dtype={float32}")]
    return [insert_after(facts, last.value if isinstance(last, ast.keyword) else last, f", dtype={float32}")]


def make_float32(facts: ModuleFacts, node: ast.AST) -> List[Edit]:
    """Edits that make the tensor computed by ``node`` float32 without other change."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        receiver = node.func.value
        if method in ("arange", "linspace", "zeros", "ones", "full", "tensor", "empty", "logspace") and \
                facts.names.qualname(node.func) is not None:
            return set_dtype_float32(facts, node)
        if method in ("half", "bfloat16", "type_as", "type") or (method == "to" and _only_dtype_args(facts, node)):
            return [replace(facts, node, f"{atom(facts, receiver)}.float()")]
        if method == "to" and keyword(node, "dtype") is not None:
            return set_dtype_float32(facts, node)
    if isinstance(node, ast.Call) and facts.names.qualname(node.func) in (
            "torch.arange", "torch.linspace", "torch.tensor", "torch.logspace"):
        return set_dtype_float32(facts, node)
    if isinstance(node, ast.BinOp):
        # An integer tensor in a true division or with a Python float: make that operand float32.
        for side in (node.left, node.right):
            if _is_integer_tensor_expr(facts, side):
                return make_float32_operand(facts, side)
    return []


def make_float32_operand(facts: ModuleFacts, node: ast.AST) -> List[Edit]:
    if isinstance(node, ast.Call) and facts.names.qualname(node.func) in ("torch.arange", "torch.linspace") \
            and keyword(node, "dtype") is None:
        return set_dtype_float32(facts, node)
    return [replace(facts, node, f"{atom(facts, node)}.float()")]


def _is_integer_tensor_expr(facts: ModuleFacts, node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and facts.names.qualname(sub.func) in ("torch.arange", "torch.range"):
            return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "cumsum":
            return True
    return False


def _only_dtype_args(facts: ModuleFacts, call: ast.Call) -> bool:
    """``.to(x.dtype)`` / ``.to(torch.bfloat16)`` / ``.to(x)``: nothing but the dtype source."""
    return len(call.args) == 1 and not call.keywords


def enclosing(facts: ModuleFacts, node: ast.AST, kinds) -> Optional[ast.AST]:
    current = facts.parent_of(node)
    while current is not None and not isinstance(current, kinds):
        current = facts.parent_of(current)
    return current


def enclosing_statement(facts: ModuleFacts, node: ast.AST) -> Optional[ast.stmt]:
    """The simple statement that contains ``node``, if it sits directly in a block."""
    current = node
    while current is not None and not isinstance(current, ast.stmt):
        current = facts.parent_of(current)
    if current is None or isinstance(current, (ast.If, ast.For, ast.While, ast.With, ast.Try,
                                               ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return None
    return current


def device_source(facts: ModuleFacts, node: ast.AST) -> Optional[str]:
    """An expression for the device at ``node``: a ``device`` parameter, or ``<param>.device``
    of the enclosing function's first tensor-like parameter."""
    function = enclosing(facts, node, (ast.FunctionDef, ast.AsyncFunctionDef))
    if function is None:
        return None
    params = [a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs]
    if "device" in params:
        return "device"
    for name in params:
        if not _NOT_TENSORS.search(name):
            return f"{name}.device"
    return None


def simple_name(facts: ModuleFacts, node: ast.AST) -> Optional[str]:
    """The source of ``node`` when it is a plain name or attribute chain, else None."""
    probe = node
    while isinstance(probe, ast.Attribute):
        probe = probe.value
    return facts.source(node) if isinstance(probe, ast.Name) else None


def indent_of(facts: ModuleFacts, stmt: ast.stmt) -> str:
    line = facts.index.line_text(stmt.lineno)
    return line[: len(line) - len(line.lstrip())]


def newline_of(facts: ModuleFacts) -> str:
    text = facts.text
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def wrap_in_block(facts: ModuleFacts, stmt: ast.stmt, header: str, inner_edits: List[Edit]) -> Optional[Edit]:
    """Put ``stmt`` (with ``inner_edits`` applied) under ``header`` (e.g. ``with ...:``), one
    level deeper. Returns one edit spanning the statement, or None if it cannot be done cleanly."""
    start, end = facts.span(stmt)
    line_start = facts.index.starts[stmt.lineno - 1]
    indent = indent_of(facts, stmt)
    if facts.text[line_start:start] != indent:
        return None  # shares its line with other code (``a = 1; b = 2``)
    body = facts.text[start:end]
    for edit in sorted(inner_edits, key=lambda e: e.start, reverse=True):
        if not (start <= edit.start <= edit.end <= end):
            return None
        body = body[: edit.start - start] + edit.replacement + body[edit.end - start:]
    newline = newline_of(facts)
    step = "\t" if indent.startswith("\t") else "    "
    lines = body.split(newline)
    moved = [lines[0]] + [(step + line if line.strip() else line) for line in lines[1:]]
    text = f"{header}{newline}{indent}{step}" + newline.join(moved)
    return Edit(start, end, text)


def float32_copy_fix(facts: ModuleFacts, attr: Optional[str], cls: Optional[str],
                     is_complex: bool = False) -> Optional[Fix]:
    """The fix for a module tensor that ``module.to()`` rounds (POS102, POS104, POS106, POS201),
    in class ``cls`` and the classes related to it."""
    edits = keep_float32_copy(facts, attr, cls, is_complex) if attr and cls else None
    if not edits:
        return None
    imports = tuple(dict.fromkeys(
        imp for name in (("int64", "complex64") if is_complex else ("int32", "float32"))
        for imp in torch_attr(facts, name)[1]))
    return Fix(tuple(edits), "unsafe", f"read '{attr}' from float32 bits that module.to() does not convert", imports)


def keep_float32_copy(facts: ModuleFacts, attr: str, cls: str, is_complex: bool = False) -> Optional[List[Edit]]:
    """Keep the float32 values of buffer (or frozen parameter) ``attr`` where ``module.to(dtype)``
    cannot reach them: next to every ``register_buffer``/``nn.Parameter`` of it, register a
    non-persistent *integer* buffer that views the same float32 bits (module conversions skip
    integer buffers but still move them between devices), and read the frequencies from that view
    wherever the forward path used the rounded tensor. ``state_dict()`` is unchanged."""
    int_dtype, _ = torch_attr(facts, "int64" if is_complex else "int32")
    float_dtype, _ = torch_attr(facts, "complex64" if is_complex else "float32")
    upcast = "" if is_complex else ".float()"
    newline = newline_of(facts)
    related = facts.related_classes(cls)
    edits: List[Edit] = []
    for store in facts.stores_of(attr, related):
        if store.storage == "plain":
            continue
        statement = enclosing_statement(facts, store.node)
        frozen = store.storage == "buffer" or _frozen_parameter(facts, store.value_node)
        if statement is None or not frozen or facts.parent_of(statement) is None:
            return None
        indent = indent_of(facts, statement)
        bits = _bits_name(facts, attr, store.name_node)
        computed = store.name_node is not None and not isinstance(store.name_node, ast.Constant)
        held = f"getattr(self, {facts.source(store.name_node)})" if computed else f"self.{attr}"
        comment = f"# '{attr}' at full precision: module.to(dtype) converts floating buffers, not integer ones"
        register = f'self.register_buffer({bits}, {held}{upcast}.view({int_dtype}), persistent=False)'
        edits.append(insert_after(facts, statement, f"{newline}{indent}{comment}{newline}{indent}{register}"))
    if not edits:
        return None
    reads = {id(read.node): read.node for read in facts.value_reads(attr, related)}
    for node in reads.values():
        if isinstance(node, ast.Call):  # getattr(self, name)
            bits = f"getattr(self, {_bits_name(facts, attr, node.args[1])})"
        else:
            bits = f"self._{attr}_bits"
        edits.append(replace(facts, node, f"{bits}.view({float_dtype})"))
    return edits


# A string literal, with its prefix and quotes: the name of a buffer.
STRING_LITERAL = re.compile(r"""([rRfFuU]{0,2})('''|\"\"\"|'|")(.*)\2""", re.S)


def _bits_name(facts: ModuleFacts, attr: str, name_node: Optional[ast.AST]) -> str:
    """The string expression naming the bits buffer of ``attr``: ``"_inv_freq_bits"``; for a name
    given as an expression (``f"{kind}_inv_freq"``), that expression with ``_`` before and
    ``_bits`` after, so that each member of a family of buffers gets its own bits buffer."""
    if name_node is None:
        return f'"_{attr}_bits"'
    source = facts.source(name_node)
    literal = STRING_LITERAL.fullmatch(source)
    if isinstance(name_node, (ast.Constant, ast.JoinedStr)) and literal:
        prefix, quote, body = literal.groups()
        return f"{prefix}{quote}_{body}_bits{quote}"
    return f'"_" + ({source}) + "_bits"'


def _frozen_parameter(facts: ModuleFacts, value_node: Optional[ast.AST]) -> bool:
    """``nn.Parameter(x, requires_grad=False)``: a trainable parameter cannot be shadowed."""
    if not isinstance(value_node, ast.Call) or not (facts.names.qualname(value_node.func) or "").endswith("Parameter"):
        return False
    flag = keyword(value_node, "requires_grad")
    if flag is None and len(value_node.args) > 1:
        flag_value = value_node.args[1]
    else:
        flag_value = flag.value if flag is not None else None
    return isinstance(flag_value, ast.Constant) and flag_value.value is False


def module_tensor_name(reason: str) -> Optional[str]:
    """``"buffer 'inv_freq'"`` or ``"parameter 'inv_freq'"`` -> ``"inv_freq"``."""
    for kind in ("buffer '", "parameter '"):
        if reason.startswith(kind) and reason.endswith("'"):
            return reason[len(kind):-1]
    return None


def relative_to_query(facts: ModuleFacts, bias: ast.AST) -> Edit:
    """``bias`` -> ``bias - bias.diagonal(-2, -1)[..., None]`` on a full [.., S, S] ALiBi bias:
    each row minus its query's own entry is ``slope * (key - query)``, zero on the diagonal. Softmax
    is shift-invariant per row, so attention is unchanged; the near-diagonal entries become small
    and survive a 16-bit cast."""
    name = simple_name(facts, bias)
    if name is not None:
        text = f"({name} - {name}.diagonal(dim1=-2, dim2=-1).unsqueeze(-1))"
    else:
        text = f"((_bias := {facts.source(bias)}) - _bias.diagonal(dim1=-2, dim2=-1).unsqueeze(-1))"
    return replace(facts, bias, text)
