"""One pass over a module's tree that the analysis reads instead of walking it again.

The object model and the interpreter look at the nodes under each function, lambda and class
many times (calls, ``self.<attr>`` reads, assignments, ``with`` blocks, parameter uses). Walking
with :func:`ast.walk` each time cost a third of a run. :func:`index_module` makes one
breadth-first pass and gives each function, lambda and class node the list of the nodes under it;
:func:`walk` then yields exactly what ``ast.walk`` yields, in the same order: a breadth-first order
of the whole tree, kept to one subtree, is the breadth-first order of that subtree.

The lists hang on the nodes themselves (an attribute that :mod:`ast` ignores), so they live and
die with the tree; they hold no reference back up, so a tree stays free of cycles and is freed
as soon as the analysis drops it.
"""

from __future__ import annotations

import ast
from array import array
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Set

# The nodes whose subtrees are listed.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SCOPE_CLASSES = frozenset(SCOPES)  # ast's node classes are never subclassed by a parse
_ID_CHUNK = 1 << 16
_BELOW = "_poslint_below"
_INDEX = "_poslint_index"


class NodeIds:
    """The ids of a tree's nodes, 8 bytes each (a set of ints takes some 45 bytes a node, a sixth
    of the tree itself), sorted when first asked: few trees are ever asked, and rarely."""

    def __init__(self) -> None:
        self._ids = array("Q")
        self._sorted = True

    def add(self, key: int) -> None:
        self._ids.append(key)
        self._sorted = False

    def extend(self, keys: List[int]) -> None:
        self._ids.extend(keys)
        self._sorted = False

    def __contains__(self, key: int) -> bool:
        if not self._sorted:
            self._ids = array("Q", sorted(self._ids))
            self._sorted = True
        at = bisect_left(self._ids, key)
        return at < len(self._ids) and self._ids[at] == key

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)


@dataclass
class ModuleIndex:
    imports: List[ast.AST] = field(default_factory=list)  # Import and ImportFrom, in ast.walk order
    class_names: Set[str] = field(default_factory=set)  # every class defined, at any depth
    top_level_calls: List[ast.Call] = field(default_factory=list)  # calls outside every scope
    calls_by_name: Dict[str, List[ast.Call]] = field(default_factory=dict)  # ``name(...)``, by the name called
    ids: NodeIds = field(default_factory=NodeIds)  # of every node of the tree


def index_module(tree: ast.Module) -> ModuleIndex:
    """The :class:`ModuleIndex` of ``tree`` (made once per tree), listing each scope's subtree."""
    known = getattr(tree, _INDEX, None)
    if known is not None:
        return known
    index = ModuleIndex()
    queue = deque([(tree, ())])
    pop, push = queue.popleft, queue.append
    pending: List[int] = []  # ids, moved into the compact array in chunks (a list of ints is 5 times its size)
    AST = ast.AST
    while queue:
        node, enclosing = pop()
        pending.append(id(node))
        if len(pending) >= _ID_CHUNK:
            index.ids.extend(pending)
            pending.clear()
        for below in enclosing:
            below.append(node)
        kind = node.__class__
        if kind in _SCOPE_CLASSES:
            own: List[ast.AST] = []
            setattr(node, _BELOW, own)
            enclosing = enclosing + (own,)
            if kind is ast.ClassDef:
                index.class_names.add(node.name)
        elif kind is ast.Import or kind is ast.ImportFrom:
            index.imports.append(node)
        elif kind is ast.Call:
            if not enclosing:
                index.top_level_calls.append(node)
            if node.func.__class__ is ast.Name:
                index.calls_by_name.setdefault(node.func.id, []).append(node)
        for name in node._fields:  # what ast.iter_child_nodes yields, in its order
            value = getattr(node, name, None)
            if isinstance(value, AST):
                push((value, enclosing))
            elif value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        push((item, enclosing))
    index.ids.extend(pending)
    setattr(tree, _INDEX, index)
    return index


def node_ids(tree: ast.Module) -> NodeIds:
    """The ids of every node of ``tree``, made once per tree: each host's borrowed facts of an
    imported module ask whether a node is in that module's tree."""
    return index_module(tree).ids


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """What ``ast.walk(node)`` yields; from the lists of :func:`index_module` for an indexed scope."""
    below = getattr(node, _BELOW, None)
    if below is None:
        yield from ast.walk(node)
        return
    yield node
    yield from below
