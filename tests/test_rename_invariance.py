"""Findings come from the mechanism, never from a spelling: a consistent renaming of every
identifier a file defines changes no finding's line or code.

The renamed identifiers are locals, parameters, functions, classes, ``self`` attributes and
class attributes, and the buffer names inside strings (``register_buffer("inv_freq", ...)``,
``getattr(self, "inv_freq")``). Names that other code defines keep theirs: imports, builtins,
keyword arguments of calls into other modules (``dim=`` of ``torch.cat``), attributes of
objects from elsewhere (``x.shape``), and the names torch itself calls (``forward``,
``__init__``, ``reset_parameters``...). The rewrite works on tokens, so every line keeps its
number.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import tokenize
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from poslint.engine.linter import LintOptions, lint_bytes
from poslint.rules import all_rules

FIXTURES = Path(__file__).parent / "fixtures"
# The model fixtures (core/ holds files that do not decode or parse, for POS001).
CASES = [p for kind in ("rope", "alibi") for folder in ("checker/*.py", "codemod/*.in.py")
         for p in sorted((FIXTURES / kind).glob(folder))]
# Names that torch, the loaders, the training frameworks or the verify protocol call by name.
PROTOCOL = {"forward", "extra_repr", "reset_parameters", "_init_weights", "init_weights", "post_init", "_apply",
            "poslint_factory", "self", "cls", "_keep_in_fp32_modules", "_keep_in_fp32_modules_strict"}


def _definitions(tree: ast.Module) -> Tuple[Set[str], Set[str], Set[str]]:
    """(names, self/class attributes, names of other modules) defined in or imported by ``tree``."""
    imported: Set[str] = set()
    names: Set[str] = set()
    attrs: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            attrs.add(node.attr)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                getattr(node.func, "attr", "") in ("register_buffer", "register_parameter"):
            attrs.add(node.args[0].value)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("setattr", "getattr") and \
                len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and \
                isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            attrs.add(node.args[1].value)  # (``getattr(config, "torch_dtype")`` names another object's field)
    for node in tree.body:  # class attributes
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    attrs |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names, attrs, imported


def rename_map(source: str) -> Dict[str, str]:
    tree = ast.parse(source)
    names, attrs, imported = _definitions(tree)
    return {name: f"renamed_{i}" for i, name in enumerate(sorted(_renamed(names | attrs, imported)
                                                                 - _overrides_of_libraries(tree)))}


def _overrides_of_libraries(tree: ast.Module) -> Set[str]:
    """Methods of classes that subclass a third-party class (not torch's), directly or through a class
    of this file: they override the library's API by its names, which a renaming of this file cannot
    change. So do the attributes such a class reads from ``self`` and no class of its line assigns:
    the library base holds them (transformers' rotaries' ``inv_freq``)."""
    foreign = {(a.asname or a.name).split(".")[0] for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom))
               and ((node.module or "") if isinstance(node, ast.ImportFrom) else node.names[0].name)
               .split(".")[0] not in ("torch", "")
               for a in node.names}
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def line(cls: ast.ClassDef) -> List[ast.ClassDef]:
        found = [cls]
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and classes[base.id] is not cls:
                found += line(classes[base.id])
        return found

    def self_attrs(cls: ast.ClassDef, ctx: type) -> Set[str]:
        return {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ctx)
                and isinstance(n.value, ast.Name) and n.value.id == "self"}

    overrides = set()
    for cls in classes.values():
        ancestry = line(cls)
        if not any(isinstance(b, ast.Name) and b.id in foreign for c in ancestry for b in c.bases):
            continue
        overrides |= {item.name for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assigned = set().union(*(self_attrs(c, ast.Store) for c in ancestry)) | {
            n.args[0].value for c in ancestry for n in ast.walk(c) if isinstance(n, ast.Call) and n.args
            and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer"
            and isinstance(n.args[0], ast.Constant)}
        overrides |= self_attrs(cls, ast.Load) - assigned - {m.name for c in ancestry for m in c.body
                                                           if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return overrides


def _renamed(candidates: Set[str], imported: Set[str]) -> Set[str]:
    keep = imported | set(dir(builtins)) | PROTOCOL | set(keyword.kwlist)
    return {n for n in candidates if isinstance(n, str) and n.isidentifier()
            and not (n.startswith("__") and n.endswith("__"))} - keep


def _kept_tokens(tree: ast.Module, mapping: Dict[str, str]) -> Set[Tuple[int, int]]:
    """Positions of name tokens that belong to other code and keep their spelling."""
    import torch

    _, attrs, imported = _definitions(tree)
    local_functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    # Names bound to this file's classes (``attn_class = CausalAttention if causal else Attention``):
    # their calls build those classes, whose keywords are renamed with their parameters.
    local_functions |= {n.targets[0].id for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                        and isinstance(n.targets[0], ast.Name)
                        and all(isinstance(o, ast.Name) and o.id in local_functions
                                for o in ((n.value.body, n.value.orelse) if isinstance(n.value, ast.IfExp) else (n.value,)))}
    methods = {item.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for item in n.body
               if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # Attributes this file gives its own objects: self/class attributes, and its classes' methods
    # wherever they are called (``self.scaling.frequencies(...)``, ``super().frequencies(...)``).
    defined = _renamed(attrs | methods, imported)
    parameters = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
                  for a in (*n.posonlyargs, *n.args, *n.kwonlyargs)}
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    # Attributes holding an instance of this file's classes (``self.first = Block(dim)``).
    held_attrs = {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                  if isinstance(t, ast.Attribute) and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                                                          and c.func.id in classes for c in ast.walk(n.value))}
    kept = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            target = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            # A module held in a local (``for attn in self.layers: attn(x, rotary=r)``) or in an
            # attribute that holds one of this file's classes is this file's: its keywords are its
            # forward's parameters, renamed with them.
            held_here = (isinstance(func, ast.Name) and func.id in mapping) or (
                isinstance(func, ast.Attribute) and func.attr in held_attrs and func.attr in mapping)
            # ``partial(local_fn, dim=d)`` binds local_fn's parameters by keyword: renamed with them.
            partial_of_local = target == "partial" and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id in local_functions
            if target not in local_functions and not partial_of_local:
                kept |= {(k.lineno, k.col_offset) for k in node.keywords
                         if k.arg and not (held_here and k.arg in parameters)}
        if isinstance(node, ast.Attribute):
            owner_is_self = isinstance(node.value, ast.Name) and node.value.id == "self"
            owner_is_local_class = isinstance(node.value, ast.Name) and node.value.id in local_functions
            owner_is_module = isinstance(node.value, ast.Name) and node.value.id in imported
            if not (owner_is_self or owner_is_local_class) and (
                    owner_is_module or node.attr not in defined or hasattr(torch.Tensor, node.attr)):
                kept.add((node.end_lineno, node.end_col_offset - len(node.attr)))
            elif owner_is_self and node.attr not in mapping:
                kept.add((node.end_lineno, node.end_col_offset - len(node.attr)))
    return kept


def rename(source: str) -> str:
    mapping = rename_map(source)
    tree = ast.parse(source)
    kept = _kept_tokens(tree, mapping)
    # (imports name other code's modules: ``from flash_attn.layers.rotary import ...`` keeps ``rotary``)
    import_lines = {line for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for line in range(n.lineno, n.end_lineno + 1)}
    words = re.compile(r"\b(" + "|".join(map(re.escape, sorted(mapping, key=len, reverse=True))) + r")\b") \
        if mapping else None
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        text = tok.string
        if tok.type == tokenize.NAME and text in mapping and tok.start not in kept and tok.start[0] not in import_lines:
            text = mapping[text]
        elif tok.type == tokenize.STRING and words is not None:
            body = re.fullmatch(r"([A-Za-z]*)(['\"]{3}|['\"])(.*)\2", text, re.S)
            if body and "f" in body.group(1).lower():  # names inside replacement fields
                text = re.sub(r"\{[^{}]*\}", lambda m: words.sub(lambda w: mapping[w.group(1)], m.group(0)), text)
            elif body and body.group(3) in mapping:  # a buffer name in a string
                text = f"{body.group(1)}{body.group(2)}{mapping[body.group(3)]}{body.group(2)}"
        out.append((tok.type, text, tok.start, tok.end, tok.line))
    return _untokenize(source, out)


def _untokenize(source: str, tokens) -> str:
    """Tokens back to text with every token at its line; only columns shift."""
    lines = source.splitlines(keepends=True)
    result = []
    row, col = 1, 0
    for _type, text, (srow, scol), (erow, ecol), _line in tokens:
        if srow > len(lines):  # ENDMARKER, and the DEDENTs before it
            break
        while row < srow:
            result.append(lines[row - 1][col:])
            row, col = row + 1, 0
        result.append(lines[row - 1][col:scol])
        result.append(text)
        row, col = erow, ecol
    while row <= len(lines):
        result.append(lines[row - 1][col:])
        row, col = row + 1, 0
    return "".join(result)


def findings(source: str, name: str):
    result, _, _ = lint_bytes(source.encode("utf-8"), name, LintOptions(codes=frozenset(all_rules())))
    assert not result.internal_errors, result.internal_errors
    return sorted((d.line, d.code) for d in result.diagnostics)


def test_rename_changes_every_defined_identifier_and_keeps_the_rest():
    source = (
        "import torch\n"
        "class Rope(torch.nn.Module):\n"
        "    def __init__(self, dim):\n"
        "        super().__init__()\n"
        "        self.register_buffer('inv_freq', 1.0 / (10000 ** (torch.arange(0, dim, 2) / dim)))\n"
        "    def forward(self, x, kind):\n"
        "        t = torch.arange(x.shape[0]).type_as(getattr(self, 'inv_freq'))\n"
        "        return torch.cat((t, t), dim=-1) + getattr(self, f'{kind}_x')\n")
    renamed = rename(source)
    assert "inv_freq" not in renamed and "kind" not in renamed and "Rope" not in renamed
    assert "dim=-1" in renamed and "x.shape" not in renamed and ".shape[0]" in renamed
    assert "torch.arange" in renamed and "torch.cat" in renamed
    assert "def forward(self" in renamed and "def __init__(self" in renamed
    assert renamed.count("\n") == source.count("\n")
    ast.parse(renamed)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_renaming_every_identifier_keeps_every_finding(case: Path):
    source = case.read_text(encoding="utf-8")
    renamed = rename(source)
    assert renamed != source or not rename_map(source)
    ast.parse(renamed)
    assert findings(renamed, case.name) == findings(source, case.name)
