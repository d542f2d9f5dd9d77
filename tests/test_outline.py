"""The outline of a module read from its text (poslint/engine/outline.py) is what its tree gives
(``tree_outline``), or None: the project prefilter's index reads it instead of parsing, so a
wrong outline would change which files are analysed (issue 16)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poslint.core.source import SourceText, UndecodableSource
from poslint.engine.imports import tree_outline
from poslint.engine.outline import outline

ROOT = Path(__file__).resolve().parent.parent
TREES = ("tests/fixtures", "tests/corpus", "tests/realworld", "tests/runtime_models", "examples")
TRANSFORMERS = ROOT / "build/real_models/transformers-5.24.0/transformers"


def _tree(text: str):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _check(text: str, where: str) -> bool:
    """Whether ``text`` was outlined; fails if the outline differs from the tree's."""
    found = outline(text)
    tree = _tree(text)
    if found is not None and tree is not None:
        assert found == tree_outline(tree), where
    return found is not None


def _texts(paths):
    for path in paths:
        try:
            yield path, SourceText.from_bytes(path.read_bytes()).text
        except UndecodableSource:
            continue


def test_the_outline_of_every_test_tree_file_is_its_trees():
    paths = [p for tree in TREES for p in sorted((ROOT / tree).rglob("*.py"))]
    outlined = sum(_check(text, str(path)) for path, text in _texts(paths))
    assert len(paths) > 200 and outlined >= 0.97 * len(paths)


@pytest.mark.skipif(not TRANSFORMERS.is_dir(), reason=f"{TRANSFORMERS} is not unpacked here")
def test_the_outline_of_every_transformers_module_is_its_trees():
    paths = sorted(TRANSFORMERS.rglob("*.py"))
    outlined = sum(_check(text, str(path)) for path, text in _texts(paths))
    assert len(paths) > 2000 and outlined == len(paths)


@pytest.mark.parametrize("source", [
    "import a.b as c, d\nfrom .x import (e as f,\n    g,)\nfrom .. import h\nfrom . y import *\n",
    "@decorator(\n    x=1)\ndef f(a,\n      b): return a\n\n\nasync def g(): pass\n",
    "class A(B,\n        C, metaclass=M, **kw): x = 1\n",
    "class A(\n    B,\n):\n    '''doc (\n    '''\n    try:\n        import c\n"
    "    except ImportError:\n        c = None\n"
    "    else:\n        d = 1\n    finally:\n        pass\n\n    @property\n    def f(self):\n        return 1\n"
    "    def f(self): return 2\n    class Inner: pass\n",
    "if x:\n    y = 1\nelif z:\n    try:\n        from m import w\n    finally:\n        pass\nelse:\n"
    "    for i in range(3):\n        q = i\n    else:\n        with open(p) as fh:\n            r: int = 2\n",
    "a = b = c[d] = e.f = (g, *h) = [i, j] = 1\nk: Dict[str, int] = {}\nl += 1\nm == n\no <= p\n",
    "x = lambda a=1: a\ny: Callable = lambda b=2: b\nd['k'] = 1\nd[b'k'] = 2\nd[1e5] = 3\n",
    "s = '''\nclass Fake:\n    pass\n'''\nt = \"a \\\n b\"\nu = (1 +\n\n     2)\nv = 1 + \\\n    2\n",
    "def f():\n    x = 1\n# a comment at column 0 inside\n    return x\n\n# trailing\n",
    "x = 1\r\ny = 2\r\n",
    "match = 1\ntype = 2\ncase(3)\nmatch.x = 4\n",
    "del a\nassert b, 'c'\nglobal d\nprint(e, end='')\nNone\n'''doc'''\n",
])
def test_tricky_statements_outline_as_their_trees(source):
    assert _check(source, source)


@pytest.mark.parametrize("source", [
    "x = 1; y = 2\n",  # several statements on a line
    "if x: y = 1\n",  # a compound statement on one line
    "try: import a\nexcept ImportError: a = None\n",
    "match x:\n    case 1:\n        y = 1\n",
    "x = (1,\n",  # a bracket left open
    "x = 'open\n",
    "d[f'{k}'] = 1\n",  # an f-string in a target
    "d[g(a=1)] = 1\n",  # a keyword argument in a target
    "\u00e9t\u00e9 = 1\n",  # non-ASCII code at top level
    "if x:\n\ty = 1\n",  # a tab in indentation
    "x = 1\x0cy = 2\n",  # a line break that splitlines knows and the tokenizer does not
])
def test_what_the_text_may_not_tell_is_left_to_the_parser(source):
    assert outline(source) is None


SIMPLE = ["import a", "import a.b as c", "from .m import (x,\n    y as z)", "from . import w", "x = 1", "x, *y = f(a)",
          "d[k] = v", "o.p = q", "n: int = 3", "n: int", "x += 1", "f(x=1)", "'''doc (\n'''", "s = '(' + \"[\"",
          "t = (\n    1,\n\n    2,\n)", "u = 1 + \\\n    2", "lam = lambda a=1: a", "pass", "return x",
          "# c", "y = (1,  # )\n     2)", "z: int = 0", "a = b = c", "del a"]
HEADERS = ["if c:", "for i in r:", "with m as n:", "while k:", "try:", "def f(a):", "async def g():", "@dec\ndef h(b):",
           "class C(B, metaclass=M):", "class D:", "class E(\n    F,\n):", "@dec\nclass G(H):"]
ONE_LINERS = ["class G(H): pass", "def h(): return 1", "class J(\n    K): x = 1"]
CLAUSES = {"if c:": ["elif d:", "else:"], "try:": ["except E:", "else:", "finally:"], "for i in r:": ["else:"],
           "while k:": ["else:"]}


def _indented(line: str, depth: int) -> str:
    return "    " * depth + line.replace("\n", "\n" + "    " * depth)


@st.composite
def blocks(draw, depth=0):
    """A block of statements: simple ones, one-line definitions, and compound ones with their
    clauses and indented blocks."""
    lines = []
    for _ in range(draw(st.integers(1, 4 if depth < 3 else 2))):
        kind = draw(st.sampled_from(["simple", "simple", "one", "compound"] if depth < 3 else ["simple"]))
        if kind == "simple":
            lines.append(_indented(draw(st.sampled_from(SIMPLE)), depth))
        elif kind == "one":
            lines.append(_indented(draw(st.sampled_from(ONE_LINERS)), depth))
        else:
            header = draw(st.sampled_from(HEADERS))
            lines += [_indented(header, depth), draw(blocks(depth + 1))]
            clauses = st.lists(st.sampled_from(CLAUSES[header]), max_size=2, unique=True) if header in CLAUSES \
                else st.just([])
            for clause in draw(clauses):
                lines += [_indented(clause, depth), draw(blocks(depth + 1))]
    return "\n".join(lines)


@st.composite
def programs(draw):
    """Programs of those blocks, most of them valid; some with a line moved to another
    indentation, most of which then do not parse: the outline must agree with the tree wherever
    both exist."""
    lines = (draw(blocks()) + "\n").split("\n")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = " " * draw(st.integers(0, 9)) + lines[at].lstrip(" ")
    return "\n".join(lines)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_outline_as_their_trees(source):
    _check(source, source)


def test_generated_programs_often_parse_and_outline():
    """The test above means something: most of its programs both parse and outline."""
    both = 0

    @settings(max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(programs())
    def count(source):
        nonlocal both
        both += outline(source) is not None and _tree(source) is not None

    count()
    assert both >= 200
