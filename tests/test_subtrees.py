"""The one-pass index of a module (poslint.analysis.subtrees) gives what the walks it replaces
gave: ``walk`` is ``ast.walk`` node for node and in order under every function, lambda and
class, the imports come in ``ast.walk`` order, and the top-level calls are those outside every
scope. Checked on every Python file of the fixture trees and on generated nestings."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poslint.analysis.subtrees import SCOPES, index_module, node_ids, walk

ROOT = Path(__file__).resolve().parent.parent
TREES = ("tests/fixtures", "tests/corpus", "tests/realworld", "tests/runtime_models", "examples", "poslint")


def _trees():
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    yield path, ast.parse(path.read_text(encoding="utf-8", errors="replace"))
                except (SyntaxError, ValueError, RecursionError):
                    continue


def _top_level_calls(tree):
    """What ModuleModel.calls_in(tree, top_level_only=True) yielded before the index."""
    stack, out = list(ast.iter_child_nodes(tree)), []
    while stack:
        child = stack.pop()
        if isinstance(child, SCOPES):
            continue
        if isinstance(child, ast.Call):
            out.append(child)
        stack.extend(ast.iter_child_nodes(child))
    return out


def _check(tree):
    index = index_module(tree)
    assert index_module(tree) is index  # made once per tree
    everything = list(ast.walk(tree))
    assert index.imports == [n for n in everything if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert index.class_names == {n.name for n in everything if isinstance(n, ast.ClassDef)}
    assert sorted(map(id, index.top_level_calls)) == sorted(map(id, _top_level_calls(tree)))
    assert sorted(node_ids(tree)) == sorted(id(n) for n in everything) and node_ids(tree) is node_ids(tree)
    assert all(id(n) in node_ids(tree) for n in everything)
    other = list(ast.walk(ast.parse("x = f(1)\n")))  # its contexts and operators are shared singletons
    assert not any(id(n) in node_ids(tree) for n in other if hasattr(n, "lineno"))
    scopes = [n for n in everything if isinstance(n, SCOPES)]
    for scope in scopes:
        assert list(walk(scope)) == list(ast.walk(scope))
    return len(scopes)


@pytest.mark.parametrize("path,tree", list(_trees()), ids=lambda v: str(v.relative_to(ROOT)) if isinstance(v, Path) else "")
def test_the_index_walks_as_ast_walk(path, tree):
    _check(tree)


def test_a_node_outside_every_indexed_scope_is_walked_by_ast():
    tree = ast.parse("def f():\n    return g(h(1))\n")
    index_module(tree)
    call = tree.body[0].body[0].value
    assert list(walk(call)) == list(ast.walk(call))
    other = ast.parse("class C:\n    x = [lambda: 1]\n").body[0]  # never indexed
    assert list(walk(other)) == list(ast.walk(other))


_LEAVES = st.sampled_from(["f(x)", "self.a", "self.b(y)", "import m", "from . import n", "x = g()", "lambda: k()"])


@st.composite
def _programs(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["leaf", "def", "class", "if"] if depth < 4 else ["leaf"]))
        if kind == "leaf":
            lines.append(draw(_LEAVES))
            continue
        header = {"def": "def f{}(a=h()):", "class": "class C{}(B):", "if": "if t{}:"}[kind].format(len(lines))
        body = draw(_programs(depth + 1))
        lines.append(header)
        lines.extend("    " + line for line in body.splitlines())
    return "\n".join(lines)


@settings(max_examples=200, deadline=None)
@given(_programs())
def test_the_index_walks_as_ast_walk_on_generated_nestings(source):
    _check(ast.parse(source))
