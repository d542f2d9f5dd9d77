"""The text prefilter (poslint/engine/prefilter.py) never skips a file on which a rule could fire."""

from __future__ import annotations

import ast
import collections
import inspect
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poslint.analysis.interpreter as interpreter
import poslint.analysis.object_model as object_model
import poslint.analysis.roles as roles
from poslint.core.source import SourceText, UndecodableSource
from poslint.engine import prefilter
from poslint.engine.checker import check_text
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
ALL = frozenset(all_rules())
ANALYSIS = ALL - {"POS001"}
TREES = ("tests/fixtures", "tests/corpus", "tests/runtime_models", "examples")


def _files():
    for tree in TREES:
        yield from sorted((ROOT / tree).rglob("*.py"))


def _text(path: Path):
    try:
        return SourceText.from_bytes(path.read_bytes()).text
    except UndecodableSource:
        return None


@pytest.mark.parametrize("path", list(_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_with_a_finding_passes_the_prefilter(path):
    text = _text(path)
    if text is None:
        return
    found = check_text(text, str(path), ANALYSIS, prefilter=False).diagnostics
    if found:
        assert prefilter.may_have_findings(text), [f"{d.line}:{d.col} {d.code}" for d in found]
    if any(d.code == "POS001" for d in check_text(text, str(path), ALL, prefilter=False).diagnostics):
        assert not prefilter.syntax_ok(text, str(path))


def test_the_checked_trees_have_findings_and_skipped_files():
    """The test above means something: some files have findings, and some are skipped."""
    texts = [t for t in map(_text, _files()) if t is not None]
    assert sum(map(prefilter.may_have_findings, texts)) >= 100
    assert sum(not prefilter.may_have_findings(t) for t in texts) >= 3


@pytest.mark.parametrize("code", sorted(ALL - {"POS001"}))
def test_every_rule_example_with_a_finding_passes(code):
    rule = all_rules()[code]
    for example in (*rule.VALID, *rule.INVALID):
        if check_text(example, "example.py", ANALYSIS, prefilter=False).diagnostics:
            assert prefilter.may_have_findings(example), example


# --- what counts as code ------------------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ('x = "logspace"  # logspace\n', False),
    ("x = '''\nlogspace\n'''\n", False),
    ('x = f"{logspace}"\n', True),  # replacement fields are code
    ('x = rf"{logspace}"\n', True),
    ("x = Rb'logspace'\n", False),
    ('if"a"in logspace: pass\n', True),  # a keyword right before a quote
    ('x = "a\\" logspace"\n', False),  # an escaped quote does not end the string
    ('x = "a\\\\" + logspace\n', True),  # an escaped backslash does
    ("x = '''a'' logspace '''\n", False),
    ('x = "unterminated\ny = logspace\n', True),  # not a string: kept as code
    ('y = torch.LOGSPACE\n', True),  # words are matched lower-cased
    ('def logspace(): pass\n', True),
    ('my_logspace_helper = 1\n', False),
    ('self.inv_freq = x\ny = self.inv_freq * t\n', False),  # names give no role
    ('self.f = nn.Buffer(x)\ny = (self.f * t).cos()\n', True),  # a module tensor meets cos
    ('self.w = nn.Parameter(x)\ny = self.w * t\n', False),  # no rotary sink
    ('y = (x * t).cos()\n', False),  # no module tensor, no positions, no frequencies
    ('y = (x * torch.arange(n)).cos()\n', True),  # a grid times anything, into cos
    ('b = s * torch.arange(n)\ny = sdpa(q, k, v, attn_mask=b)\n', True),  # a grid times anything, into attention
    ('y = sdpa(q, k, v, attn_mask=b)\n', False),  # no positions
    ('a = angles.to(x.dtype)\ny = a.cos(), a.sin()\n', True),  # a cast into cos and sin
])
def test_code_words(source, expected):
    assert prefilter.may_have_findings(source) is expected


@pytest.mark.parametrize("source, any_power, role_power", [
    ("f(**kwargs)\n", False, False),
    ("f(a,\n  **kwargs)\n", False, False),
    ("d = {**a, **b}\n", False, False),
    ("f(  # a comment, then\n  **kwargs)\n", False, False),
    ("s = h**-0.5\n", True, False),
    ("s = h ** 2 + pos\n", True, False),  # the exponent is 2
    ("s = x ** (2)\n", True, False),
    ("s = x ** (1 / 3)\n", True, False),  # arithmetic of literals
    ("s = x ** (-1.0 / 3 + 2 ** 3)\n", True, False),
    ("s = x ** (1 / k)\n", True, True),
    ("s = x ** (1 / 3)(k)\n", True, True),
    ("s = x ** 2 ** k\n", True, True),  # x ** (2 ** k)
    ("s = x ** 2 .real\n", True, True),
    ("s = (x ** 2\n     ** k)\n", True, True),
    ("s = (x ** 2\n     .real)\n", True, True),
    ("s = x ** 2\nt = y\n", True, False),
    ("s = x ** (1 + k)\n", True, True),
    ("s = x ** -k\n", True, True),
    ("s = x ** 2j\n", True, True),
    ("x **= k\n", True, True),
    ("x **= 2\n", True, False),
    ('s = ("a" ** k)\n', True, True),  # a string operand, blanked in the code text
    ("s = t.pow(2)\n", True, False),
    ("s = torch.pow(t, 2.0)\n", True, False),
    ("s = torch.pow(2, t)\n", True, True),
    ("s = t.pow(k)\n", True, True),
    ("f = torch.pow\n", True, True),
    ("s = t.float_power(e)\n", True, True),
])
def test_powers(source, any_power, role_power):
    assert prefilter._powers(source, prefilter.code_text(source)) == (any_power, role_power)


def test_positions_are_needed_for_a_power_or_an_exponential():
    assert not prefilter.may_have_findings("def f(x, k):\n    return x ** k + x.exp()\n")
    assert prefilter.may_have_findings("def f(x, k):\n    return x ** torch.arange(k)\n")
    assert prefilter.may_have_findings("def f(x, k):\n    return (x * torch.arange(k)).exp()\n")
    # Names give no role: a parameter called position_ids is no more a position than any other.
    assert not prefilter.may_have_findings("def f(x, position_ids):\n    return (x * position_ids).exp()\n")
    assert not prefilter.may_have_findings("def f(x, compose):\n    return x ** compose\n")


def test_repeated_multiplication_by_a_power_of_two_in_a_loop():
    loop = "r = 2 ** -1.0\nv = 1.0\nfor _ in n:\n    v *= r\n"
    assert prefilter.may_have_findings(loop)
    assert not prefilter.may_have_findings(loop.replace("for _ in n:\n    v *= r", "v *= r"))
    assert not prefilter.may_have_findings(loop.replace("2 ** -1.0", "0.5"))


def test_identifiers_that_normalise_to_ascii_pass():
    # Python reads the fullwidth name as 'inv_freq' (NFKC); the prefilter cannot tell, so it passes.
    assert prefilter.may_have_findings("ｉnv_freq = 1\n")
    assert not prefilter.may_have_findings("x = 1  # ｉnv_freq\nname = 'été'\n")


def test_non_ascii_characters_that_cannot_be_in_an_identifier_do_not_pass():
    # '…' (NFKC '...') in an f-string's text is no identifier; in code it would not parse.
    assert not prefilter.may_have_findings('x = f"wait… {n}"\n')
    assert prefilter.may_have_findings('\u212a = 1\n')  # the Kelvin sign lower-cases to 'k'


# --- the raw test ---------------------------------------------------------------------------------

TRANSFORMERS_MODELS = ROOT / "build/real_models/transformers-5.24.0/transformers/models"
RAW_TREES = ("tests/corpus", "tests/realworld", "tests/fixtures", "tests/runtime_models", "examples")


def _assert_raw_implies_code(data: bytes, where: str):
    try:
        text = SourceText.from_bytes(data).text
    except UndecodableSource:
        return
    code = prefilter.code_may_have_findings(text)
    assert prefilter.raw_may_have_findings(data) or not code, where
    assert prefilter.may_have_findings(text) == code, where


def test_every_file_the_raw_test_dismisses_the_code_test_dismisses():
    files = [path for tree in RAW_TREES for path in sorted((ROOT / tree).rglob("*.py"))]
    dismissed = 0
    for path in files:
        data = path.read_bytes()
        _assert_raw_implies_code(data, str(path))
        dismissed += not prefilter.raw_may_have_findings(data)
    assert len(files) > 200 and dismissed >= 10


@pytest.mark.skipif(not TRANSFORMERS_MODELS.is_dir(), reason=f"{TRANSFORMERS_MODELS} is not unpacked here")
def test_the_raw_test_on_transformers_models():
    files = sorted(TRANSFORMERS_MODELS.rglob("*.py"))
    for path in files:
        _assert_raw_implies_code(path.read_bytes(), str(path))
    assert len(files) > 2000


@pytest.mark.parametrize("source, raw", [
    ("x = 1\n", False),
    ("y = f(**kwargs)\nfor i in range(3): pass\n", False),
    ("y = f(a,\n      **kwargs)\nfor i in range(3): pass\n", False),  # unpacking across a line break
    ("y = (a  # (\n     ** k)\nfor i in range(3): pass\n", True),  # the bracket is in a comment
    ("y = x ** 2\nfor i in range(3): pass\n", False),
    ("y = (x ** 2\n     # c\n     .real)\nr = range(3)\n", True),  # a comment line: left to the code test
    ("y = x ** 2 IF\nr = range(3)\n", True),  # keywords are not lower-cased
    ('y = ("a" ** 2)\nr = range(3)\n', True),  # a string operand: the code test sees "( ** 2"
    ('y = ("a"\u00a0** 2)\nr = range(3)\n', True),  # a non-ASCII blank before **
    ("y = torch.COS(x)\n", True),  # words are matched lower-cased
    ('y = """logspace"""\n', True),  # strings are not blanked
    ("# -*- coding: latin-1 -*-\nx = 1\n", True),  # not UTF-8: left to the code test
    ("# -*- coding: utf-8 -*-\nx = 1\n", False),
    ("\uff4cogspace = 1\n", True),  # fullwidth l: NFKC makes it ASCII
    ("x = 1  # \u00e9t\u00e9\n", False),
    ("x **= k\nfor i in range(3): pass\n", True),
    ("x *= y ** 2\nfor i in z: pass\n", True),  # (5): a power, *= and a loop
    ("x = torch.pow(t, 2)\nr = range(3)\n", False),
    ("x = torch.pow(t, k)\nr = range(3)\n", True),
    ("x = ROPE_INIT_FUNCTIONS[t](c)\n", True),  # a library helper that gives frequencies
])
def test_raw_test(source, raw):
    data = source.encode("latin-1" if "latin-1" in source else "utf-8")
    assert prefilter.raw_may_have_findings(data) is raw
    _assert_raw_implies_code(data, source)


FRAGMENTS = ["(", ")", ",", "{", "**", "** 2", "**-0.5", " ** (1 / 3)", "*=", "k", "x", " ", "\n", "\n    ",
             "# c (", "#", "'", '"', '"""', "\\", "f'{", "}'", "range", "arange", "exp", "pow(", "2", ".real",
             "for ", "while ", "cos", "sin_", "attn_mask", "\u00a0", "\u2026", "\uff43os", "IF", " if ", "\r",
             "\t", "\f", "\x1c", "=", "polar", "x.pow(2)", "torch.pow(t, k)", "@", "[", "]", "}"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_the_raw_test_never_dismisses_what_the_code_test_passes(fragments):
    _assert_raw_implies_code("".join(fragments).encode("utf-8"), repr("".join(fragments)))


def test_a_rule_the_prefilter_does_not_cover_is_never_skipped(monkeypatch):
    from poslint.engine import checker

    assert checker._cleared("x = 1\n", "x.py", {"POS101"})
    assert not checker._cleared("x = 1\n", "x.py", {"POS101", "POS999"})


@pytest.mark.parametrize("source", [
    "def f(x:\n    return x\n",
    "x = 1\x00\n",
    "nonlocal x\n",  # symtable rejects it, ast.parse does not
    "def f():\n    x = 1\n    global x\n",
    "return 1\n",  # the compiler rejects it, ast.parse does not
    "(" * 300 + ")" * 300 + "\n",
])
def test_syntax_errors_are_reported_exactly_as_without_the_prefilter(source):
    fast = check_text(source, "x.py", ALL)
    slow = check_text(source, "x.py", ALL, prefilter=False)
    assert fast.diagnostics == slow.diagnostics


# --- the argument is reviewed when the interpreter changes ----------------------------------------

BIRTH_ROLES = {"FREQS", "SLOPES", "ROTARY_COMPLEX", "POW2", "POSITIONS", "FREQ_INDEX", "ANGLES", "BIAS"}


def role_births(source: str):
    """Per function of ``source``, the roles it may give a value: each ``Role.X`` that is not a
    test (``v.has(Role.X)``, ``Role.X in roles``) or a removal (``discard``, ``- {Role.X}``)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out = collections.defaultdict(list)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Role"
                and node.attr in BIRTH_ROLES):
            continue
        child, parent = node, parents.get(node)
        while isinstance(parent, (ast.IfExp, ast.Tuple, ast.Set)) and child is not getattr(parent, "test", None):
            child, parent = parent, parents.get(parent)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and \
                parent.func.attr in ("has", "discard"):
            continue
        if isinstance(parent, ast.Compare):
            continue
        if (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub) and parent.right is child) or \
                (isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Sub)):
            continue
        function = parents.get(node)
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = parents.get(function)
        out[function.name if function else "<module>"].append(node.attr)
    return {name: tuple(sorted(roles)) for name, roles in sorted(out.items())}


def test_the_places_that_give_roles_are_the_reviewed_ones():
    found = {}
    for module in (interpreter, roles, object_model):  # every place the analysis gives roles
        found.update(role_births(inspect.getsource(module)))
    assert found == prefilter.ROLE_BIRTHS_REVIEWED, (
        "The interpreter gives roles in other places than poslint/engine/prefilter.py's soundness argument was "
        "reviewed for. Check that every finding still needs a word the prefilter looks for, then update "
        f"ROLE_BIRTHS_REVIEWED to:\n{found}")


# --- random programs --------------------------------------------------------------------------------

LINES = [
    "t = torch.arange(n, dtype=torch.bfloat16)",
    "t = torch.arange(n).to(x.dtype)",
    "t = position_ids.float().half()",
    "t = torch.linspace(0, n, n, dtype=torch.float16)",
    "i = torch.arange(0, d, 2)",
    "f = 1.0 / (base ** (i / d))",
    "f = torch.pow(base, -i / d)",
    "f = torch.exp(-math.log(base) * i / d)",
    "f = self.inv_freq",
    "f = torch.logspace(0, -4, d // 2, base=10.0)",
    "s = 2 ** (-8.0 / h * torch.arange(1, h + 1))",
    "s = torch.exp2(-torch.arange(1, h + 1))",
    "a = torch.outer(t, f)",
    "a = t[:, None] * f[None, :]",
    "a = torch.einsum('i,j->ij', t, f)",
    "a = f[None, :, None] @ t[:, None, :]",
    "b = s[:, None] * torch.arange(n)[None, :]",
    "c = torch.polar(torch.ones_like(a), a)",
    "a = a.to(x.dtype)",
    "b = b.half()",
    "y = x ** 2",
    "y = f(**kwargs)",
    "y = x * scale",
    "self.register_buffer('freqs_cis', c)",
    "self.register_buffer('bias', b)",
    "r = a.cos().to(x.dtype)",
]


@st.composite
def programs(draw):
    body = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=7))
    indent = "\n        "
    return ("import math\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
            "    def forward(self, x, n, d, h, base=10000.0, scale=1.0, **kwargs):"
            f"{indent}{indent.join(body)}{indent}return x\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_with_findings_pass_the_prefilter(source):
    if check_text(source, "p.py", ANALYSIS, prefilter=False).diagnostics:
        assert prefilter.may_have_findings(source)
    assert check_text(source, "p.py", ALL).diagnostics == check_text(source, "p.py", ALL, prefilter=False).diagnostics
