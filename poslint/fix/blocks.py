"""Building blocks for the rules' fixes: span edits computed from ``ast`` nodes.

Every edit replaces the exact span of one node (or inserts at one point), so a fix never
touches text outside its own span; comments and formatting elsewhere are kept byte for byte.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from poslint.analysis import ModuleFacts, Role, node_key
from poslint.analysis.names import canonical
from poslint.analysis.torch_api import SAME_DTYPE_PRODUCTS
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
        if method in ("arange", "linspace", "zeros", "ones", "full", "tensor", "empty", "logspace",
                      "ones_like", "zeros_like", "full_like", "empty_like") and \
                facts.names.qualname(node.func) is not None:
            return set_dtype_float32(facts, node)
        device = _device_of_like(facts, node)
        if device is not None:
            # ``.type_as(t)`` / ``.to(t)`` also move to t's device: keep that move.
            float32, _ = torch_attr(facts, "float32")
            return [replace(facts, node, f"{atom(facts, receiver)}.to(device={device}, dtype={float32})")]
        if method in ("half", "bfloat16", "type") or (method == "to" and _only_dtype_args(facts, node)):
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


def _device_of_like(facts: ModuleFacts, call: ast.Call) -> Optional[str]:
    """``x.type_as(t)`` or ``x.to(t)`` with a tensor ``t``: the source of ``t.device``, else None."""
    if len(call.args) != 1 or call.keywords or call.func.attr not in ("type_as", "to"):
        return None
    like = call.args[0]
    if call.func.attr == "to" and (_names_no_tensor(facts, like) or isinstance(like, ast.Constant)):
        return None
    return f"{atom(facts, like)}.device"


def _names_no_tensor(facts: ModuleFacts, node: ast.AST) -> bool:
    """``x.dtype``, ``torch.bfloat16``, ``dtype`` or ``device`` (names that say they are no tensor)."""
    if isinstance(node, ast.Attribute) and node.attr == "dtype":
        return True
    qualname = facts.names.qualname(node) or ""
    if qualname.startswith("torch.") and qualname[len("torch."):] in _TORCH_DTYPES:
        return True
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "dtype" in name.lower() or "device" in name.lower()


_TORCH_DTYPES = frozenset({"float16", "half", "bfloat16", "float32", "float", "float64", "double",
                           "complex64", "complex128", "int32", "int64", "long", "int"})


def _only_dtype_args(facts: ModuleFacts, call: ast.Call) -> bool:
    """``.to(x.dtype)`` / ``.to(torch.bfloat16)`` / ``.to(x)``: nothing but the dtype source."""
    return len(call.args) == 1 and not call.keywords


def enclosing(facts: ModuleFacts, node: ast.AST, kinds) -> Optional[ast.AST]:
    current = facts.parent_of(node)
    while current is not None and not isinstance(current, kinds):
        current = facts.parent_of(current)
    return current


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def in_function_of(facts: ModuleFacts, node: ast.AST, others) -> bool:
    """Whether every node of ``others`` is in the function that holds ``node``: a fix that writes
    text there may use that function's names."""
    home = enclosing(facts, node, FUNCTIONS)
    return all(enclosing(facts, other, FUNCTIONS) is home for other in others)


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
    registered = set()  # a statement seen from several calling contexts is one store
    for store in facts.stores_of(attr, related):
        if store.storage == "plain":
            continue
        if store.site.runtime and is_self_attr_assignment(facts, store.node, attr):
            # ``self.x = self.x.to(device)`` in forward: the reads after it see either tensor, and
            # only those on the reassigning path are known to be reads of the buffer.
            return None
        statement = enclosing_statement(facts, store.node)
        frozen = store.storage == "buffer" or _frozen_parameter(facts, store.value_node)
        if statement is None or not frozen or facts.parent_of(statement) is None:
            return None
        if id(statement) in registered:
            continue
        registered.add(id(statement))
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
    if not is_complex:  # (module.to() turns a complex buffer real: the original dtype is no contract)
        table = any(store.value.has(Role.ANGLES) for store in facts.stores_of(attr, related))
        cast_back = _cast_back_to_converted(facts, {node_key(node): node for node in reads.values()}, table)
        if cast_back is None:
            return None
        edits += cast_back
    for node in reads.values():
        if isinstance(node, ast.Call):  # getattr(self, name), self.get_buffer(name)
            name_node = node.args[1] if isinstance(node.func, ast.Name) else node.args[0]
            bits = f"getattr(self, {_bits_name(facts, attr, name_node)})"
        elif isinstance(node, ast.Subscript):  # self._buffers[name]
            bits = f"getattr(self, {_bits_name(facts, attr, node.slice)})"
        else:
            bits = f"self._{node.attr}_bits"  # (the member read of a family: ``self.args_0``)
        edits.append(replace(facts, node, f"{bits}.view({float_dtype})"))
    return edits


def _cast_back_to_converted(facts: ModuleFacts, reads: dict, table: bool) -> Optional[List[Edit]]:
    """Read from float32 bits, a module tensor makes float32 what was computed from it in its
    converted dtype, and what was cast to its dtype (``t.type_as(self.inv_freq)``): cos/sin of
    such angles are cast back to the tensor's dtype (``.to(self.inv_freq.dtype)``, which the fix
    leaves converted), unless they are cast to an explicit dtype already. None where that cannot
    be shown in view: such cos/sin in another function than the read, angles of such a product
    whose cos/sin are taken out of view (returned), or, for a ``table`` of angles, a read whose
    values reach neither cos/sin nor an angle product here (returned to another module)."""
    index = facts.origins()
    decided = dict(reads)  # the key of where a dtype was decided by a read -> that read
    for key, read in reads.items():
        decided.update((node_key(cast.node), read) for cast in index.casts_to.get(key, ()))
    for key in decided:
        for product in index.products.get(key, ()):
            if product.result.prec.may_be_16bit and node_key(product.node) not in index.taken:
                return None  # angles of the converted dtype whose cos/sin are taken out of view (returned)
    edits: List[Edit] = []
    done = set()
    for key, read in decided.items():
        if key in index.cast_trigs:
            continue
        for trig in index.trigs.get(key, ()):
            if not trig.site.runtime or not trig.angle.prec.may_be_16bit or id(trig.node) in done:
                continue
            if facts.enclosing_function(read) is not facts.enclosing_function(trig.node):
                return None
            done.add(id(trig.node))
            edits.append(insert_after(facts, trig.node, f".to({atom(facts, read)}.dtype)"))
    # (a join keeps one origin of several: ``cat([self.a[i], self.b[j]])`` uses both reads, shown by one)
    shown = {facts.enclosing_function(read) for key, read in decided.items() if key in index.used}
    if table and not all(facts.enclosing_function(read) in shown for read in reads.values()):
        return None
    return edits


def is_self_attr_assignment(facts: ModuleFacts, node: ast.AST, attr: str) -> bool:
    """Whether ``node`` is (the target of) ``self.<attr> = ...``."""
    statement = enclosing_statement(facts, node)
    return isinstance(statement, ast.Assign) and any(
        isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) for t in statement.targets)


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


def original_dtype(facts: ModuleFacts, node: ast.AST) -> Optional[str]:
    """The source of the dtype that ``node`` (a 16-bit position or frequency expression that
    :func:`make_float32` rewrites) produced in the original code, valid wherever its names are:
    ``arange(.., dtype=X)`` -> ``X``, ``t.type_as(y)`` -> ``y.dtype``, ``t.to(X)`` -> ``X``,
    ``t.half()`` -> ``torch.float16``, no dtype -> ``torch.get_default_dtype()``."""
    if not isinstance(node, ast.Call):
        return None
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    fixed = {"half": "float16", "bfloat16": "bfloat16"}
    if method in fixed and not node.args:
        return torch_attr(facts, fixed[method])[0]
    given = keyword(node, "dtype")
    if given is not None:
        return facts.source(given.value)
    if method in ("type_as", "to", "type") and len(node.args) == 1 and not node.keywords:
        like = node.args[0]
        if method == "type_as" or not _names_no_tensor(facts, like) and not isinstance(like, ast.Constant):
            return f"{atom(facts, like)}.dtype" if method != "type" else None
        return facts.source(like) if not isinstance(like, ast.Constant) else None
    if facts.names.qualname(node.func) in ("torch.arange", "torch.linspace", "torch.tensor", "torch.logspace"):
        return f"{torch_attr(facts, 'get_default_dtype')[0]}()"
    return None


def hard_coded_16bit(facts: ModuleFacts, node: ast.AST) -> bool:
    """``.half()``, ``.bfloat16()`` or a literal ``torch.float16``/``torch.bfloat16``: a dtype the
    code chose on purpose, which checkpoints may have been trained with."""
    dtype = original_dtype(facts, node) or ""
    return dtype.rsplit(".", 1)[-1] in ("float16", "half", "bfloat16")


def cast_trig_back(facts: ModuleFacts, product, dtype: str) -> Optional[List[Edit]]:
    """Edits that cast every cos/sin of ``product`` back to ``dtype`` (``.to(dtype)``), so that a
    product computed in float32 hands out the dtype the original did; None when some cos/sin is
    out of view (another function, or angles that leave the function themselves)."""
    key = node_key(product.node)
    trigs = [trig for trig in facts.trigs if key in trig.angle.products]
    function = enclosing(facts, product.node, FUNCTIONS)
    if not trigs or not in_function_of(facts, product.node, [trig.node for trig in trigs]):
        return None
    if not _names_valid_in(facts, dtype, function):
        return None
    return [insert_after(facts, node, f".to({dtype})") for node in {id(t.node): t.node for t in trigs}.values()]


def _names_valid_in(facts: ModuleFacts, source: str, function: Optional[ast.AST]) -> bool:
    """Whether the names ``source`` uses are defined all through ``function``: ``self``, its
    parameters, and imports."""
    try:
        expression = ast.parse(source, mode="eval")
    except SyntaxError:
        return False
    allowed = set(facts.names.aliases)
    if isinstance(function, FUNCTIONS):
        allowed |= {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
        # (a parameter bound again, ``x = x * freqs``, names another tensor where the cast goes)
        allowed -= {sub.id for sub in ast.walk(function) if isinstance(sub, ast.Name) and
                    isinstance(sub.ctx, (ast.Store, ast.Del))}
    return all(sub.id in allowed for sub in ast.walk(expression) if isinstance(sub, ast.Name))


HARD_CODED_16BIT = "; the code hard-codes a 16-bit dtype here, and checkpoints may have been trained with it"


def float32_site_fix(facts: ModuleFacts, product, node: ast.AST, edits: List[Edit], other, description: str,
                     imports: Tuple[str, ...] = ()) -> Optional[Fix]:
    """The whole fix for one 16-bit operand ``node`` of a RoPE angle product: ``edits`` make it
    float32, and, unless cos/sin keep their dtype anyway (cast to an explicit dtype afterwards,
    or the ``other`` operand is float32, so the product already was float32), every cos/sin is
    cast back to the operand's original dtype. No fix when that cannot be done in view. Unsafe
    when the original hard-codes the 16-bit dtype (float32 results change) or when the cast-back
    is needed (it assumes the other operand did not widen the original product)."""
    if not edits:
        return None
    if product.op in SAME_DTYPE_PRODUCTS and not other.prec.is_float32_or_better:
        return None  # float32 @ a 16-bit operand is an error ("expected m1 and m2 to have the same dtype")
    cast_back: List[Edit] = []
    if facts.cos_sin_cast_to_fixed(product, node):
        return None  # cos/sin follow the positions' dtype out (``emb.to(t)``): float32 ones would leave
    kept = facts.cos_sin_cast_after(product)
    if not kept and not other.prec.is_float32_or_better:
        dtype = original_dtype(facts, node)
        found = cast_trig_back(facts, product, dtype) if dtype else None
        if not found:
            return None
        cast_back = found
    containers = _container_edits(facts, product, need_cast=not cast_back and not kept)
    if containers is None:
        return None
    cast_back += containers
    hard = hard_coded_16bit(facts, node)
    return Fix(tuple(edits + cast_back), "unsafe" if hard or cast_back else "safe",
               description + (HARD_CODED_16BIT if hard else ""), imports)


_CONTAINERS = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like")


def _container_edits(facts: ModuleFacts, product, need_cast: bool) -> Optional[List[Edit]]:
    """Angles written into a tensor allocated in 16 bits (``table = torch.empty(.., dtype=x.dtype);
    table[:] = angles``) are rounded there, whatever the product's precision: the allocation
    becomes float32 too, and (``need_cast``) its cos/sin are cast back to its dtype. None when
    such an allocation cannot be made float32; [] when there is none."""
    key = node_key(product.node)
    start, end = facts.span(product.node)
    edits: List[Edit] = []
    seen = set()
    for trig in facts.trigs:
        origin = trig.angle.origin
        if key not in trig.angle.products or origin is None or not trig.angle.prec.may_be_16bit:
            continue
        call = origin.node
        inside = start <= facts.span(call)[0] < end
        if inside or not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                          and call.func.attr in _CONTAINERS):
            continue
        if id(call) in seen:
            continue
        seen.add(id(call))
        if call.func.attr.endswith("_like") or keyword(call, "dtype") is None:
            return None  # its dtype is another tensor's or the default: no single edit makes it float32
        dtype = facts.source(keyword(call, "dtype").value)
        edits += set_dtype_float32(facts, call)
        if need_cast:
            cast = cast_trig_back(facts, product, dtype)
            if cast is None:
                return None
            edits += cast
            need_cast = False
    return edits
