"""A text prefilter that decides, without parsing, that no analysis rule can fire on a file.

Soundness argument
==================

Every finding of the analysis rules (POS1xx, POS2xx) is made from a fact that the abstract
interpreter (:mod:`poslint.analysis.interpreter`) records while it carries *roles*
(:class:`~poslint.analysis.lattice.Role`):

* POS101, POS102, POS103, POS106, POS107, POS202 and POS301 report a :class:`~poslint.analysis.facts.Product`;
  POS105 reports a ``Creation`` of frequencies that meets a ``Product``; POS201 reports a
  ``Product``, or a ``Cast``/``Store`` of a value with the ``BIAS`` role; POS104 reports a
  ``Cast``/``Store`` of a value with the ``ANGLES`` or ``ROTARY_COMPLEX`` role.
* A ``Product`` needs a *factor*: a value with the ``FREQS`` or ``SLOPES`` role; or, when the
  product reaches ``cos``/``sin``/``polar``, a floating tensor read from a buffer or parameter,
  or any operand of no role multiplied by a ``POSITIONS`` grid; or, when the product reaches
  attention as a bias (``attn_mask=``, the first argument of ``baddbmm``/``addbmm``/``addmm``),
  any operand of no role multiplied by a ``POSITIONS`` grid (``Interpreter.product``).
  ``ANGLES`` and ``BIAS`` are born only in ``product``, and ``ANGLES`` also in ``cast``: a value
  of unknown role cast to 16 bits whose result reaches both cos and sin.
  ``ROTARY_COMPLEX`` is born in ``torch.polar``, or from ``ANGLES`` (``exp`` of complex angles,
  angles times ``1j``) or their cos/sin (``view_as_complex(stack([cos, sin], -1))``,
  ``complex(cos, sin)``), so it needs a product as well, except for ``polar``.

So a file can only have a finding if a ``FREQS``, ``SLOPES`` or ``ROTARY_COMPLEX`` value can be
born in it, or a buffer or parameter meets ``cos``/``sin``/``polar``. Those roles are born only
here (the rest of the interpreter only carries, merges or drops roles), and names give none:

1. a rotary sink (``cos``, ``sin`` or ``polar``) together with a module tensor (the words
   ``buffer`` or ``parameter``: ``register_buffer``, ``nn.Buffer``, ``nn.Parameter``,
   ``register_parameter``), with a positional word (below), or with a cast (the words ``to``,
   ``half``, ``bfloat16``, ``type``, ``type_as``); or an attention-bias sink (``attn_mask``,
   ``baddbmm``, ``addbmm``, ``addmm``) together with a positional word;
2. ``logspace`` (frequencies or slopes) and ``polar`` (a complex rotation);
3. ``exp``/``exp2`` of a value with the ``POSITIONS`` or ``FREQ_INDEX`` role (``reciprocal``
   and ``1 / x`` of such a growing ``exp`` or power give frequencies too, so they need (3) or (4));
4. a power (``**``, ``**=``, ``pow``, ``float_power``) whose exponent has the ``POSITIONS`` or
   ``FREQ_INDEX`` role; ``full(shape, r)`` keeps the ``POW2`` role of ``r``, which needs a power;
5. ``x *= r`` in a loop where ``r`` has the ``POW2`` role (ALiBi's geometric slopes). ``POW2``
   is born from a power (``2 ** k``, ``math.pow(2, k)``), so this needs ``*=``, a loop and a power.

``POSITIONS`` and ``FREQ_INDEX`` are born only from ``range`` (a loop or comprehension over the
builtin, or ``torch.range``), ``arange``, ``linspace`` and ``cumsum``. A product also takes any
operand of a confirmed rotary product as its positions, but that needs a factor first.

A file passes the prefilter when its *code* (the text without comments and without string
literals other than f-strings, whose replacement fields are code) has the words of (1) or (2),
or the words of (3) or (4) together with a positional word, or the words of (5). Every word is
an identifier or operator that the interpreter reads from the AST, so it is in the code text:

* Names are matched on the lower-cased code, and only as substrings or whole identifiers, so a
  word that the interpreter sees is always matched. Python normalises identifiers with NFKC; a
  file whose code has a non-ASCII character that NFKC or lower-casing turns into ASCII passes.
* A power with a numeric literal exponent (``x ** 2``, ``head_dim**-0.5``, ``x.pow(2)``) gives
  the exponent no role, so it is not a word of (4); any other form is (``x ** 2 ** k`` is
  ``x ** (2 ** k)`` and counts). ``**`` right after ``(``, ``,`` or ``{`` unpacks a mapping
  (``f(**kwargs)``) and is not a power.
* Strings and comments are found by one regular expression that follows the tokenizer's rules
  for quotes, prefixes and escapes. Where it cannot match (an unterminated string in a file
  that does not parse), the text is kept as code, which can only make more files pass.

``tests/test_prefilter.py`` fails when the places in the interpreter that give roles change, so
that this argument is checked again.

POS001
======

A file that fails the prefilter is not analysed. Whether it parses is still decided, when
POS001 is selected, by :func:`syntax_ok`: CPython's parser and symbol-table pass in C
(``symtable``), which builds no ``ast`` objects and is about twice as fast as ``ast.parse``.
It accepts a subset of what ``ast.parse`` accepts, so a file it rejects is parsed again with
``ast.parse`` to report exactly what a full check reports.
"""

from __future__ import annotations

import re
import symtable
import unicodedata
import warnings
from typing import Tuple

# The rules whose findings the argument above covers. A text is skipped only when every
# selected rule is one of these (or POS001, see :func:`syntax_ok`): a new rule is never skipped
# until its findings are added to the argument.
COVERED_RULES = frozenset({"POS101", "POS102", "POS103", "POS104", "POS105", "POS106", "POS107", "POS201",
                           "POS202", "POS301"})

# The places in the analysis (interpreter, roles, object model) that give a value one of the
# roles above, per function, as reviewed for the argument above. ``tests/test_prefilter.py``
# recomputes this table from their source and fails when it changes: review the argument, then
# update it.
ROLE_BIRTHS_REVIEWED = {
    "_arange": ("POSITIONS", "POSITIONS"),
    "combined_roles": ("FREQS", "FREQS", "POW2", "SLOPES", "SLOPES"),
    "_creation_value": ("POSITIONS",),
    "cast": ("ANGLES",),  # a cast of unknown role whose result reaches cos and sin (needs a cast word)
    "_eval_Call": ("FREQS", "POW2", "SLOPES"),
    "_eval_ListComp": ("FREQ_INDEX",),
    "negated": ("ANGLES", "BIAS", "FREQS", "SLOPES"),  # reads roles only
    "power_role": ("FREQS", "SLOPES"),
    # SLOPES, FREQS from 1 / (a growing power): they need the power of (4)
    "binop": ("FREQS", "FREQS", "FREQS", "FREQ_INDEX", "POW2", "POW2", "POW2", "ROTARY_COMPLEX", "SLOPES", "SLOPES",
              "SLOPES"),
    "exec_stmt": ("FREQ_INDEX", "SLOPES"),
    # FREQS, SLOPES: the unknown operand of a product confirmed by cos/sin, or by attention
    "product": ("ANGLES", "BIAS", "FREQS", "SLOPES"),
    "tensor_method": ("FREQS", "FREQS", "POSITIONS", "ROTARY_COMPLEX", "SLOPES", "SLOPES"),
    # ROTARY_COMPLEX: polar, and view_as_complex/complex of cos/sin (TRIG, which needs a product)
    "torch_function": ("FREQS", "POW2", "POW2", "ROTARY_COMPLEX", "ROTARY_COMPLEX", "SLOPES"),
}

# --- strings and comments -------------------------------------------------------------------

_ESCAPE = r"\\(?:\r\n|[\s\S])"  # a backslash escapes the next character, or a line ending
# Each kind of string: its opening quote, and the rest up to the closing quote.
_STRING_KINDS = (
    ('"""', '[^"\\\\]*(?:(?:' + _ESCAPE + '|"(?!""))[^"\\\\]*)*"""'),
    ("'''", "[^'\\\\]*(?:(?:" + _ESCAPE + "|'(?!''))[^'\\\\]*)*'''"),
    ('"', '[^"\\\\\\r\\n]*(?:' + _ESCAPE + '[^"\\\\\\r\\n]*)*"'),
    ("'", "[^'\\\\\\r\\n]*(?:" + _ESCAPE + "[^'\\\\\\r\\n]*)*'"),
)
# f-strings (and t-strings) are kept: their replacement fields are code. They are told apart by
# the letters before the quote (``f``, ``fr``, ``rf``...). A letter right before a quote is a
# prefix in valid code, or ends a keyword (``if"x"``); the quote starts a string either way, so
# the string is always found, at worst kept as code. Every alternative starts with a quote or
# ``#``, so that the regular expression engine skips ahead to those characters.
_STRIP = re.compile(
    "(?P<keep>" + "|".join(f"{q}(?:(?<=[fFtT]{q})|(?<=[fFtT][rR]{q})){rest}" for q, rest in _STRING_KINDS) + ")"
    + "|#[^\\r\\n]*|" + "|".join(q + rest for q, rest in _STRING_KINDS))


def code_text(text: str) -> str:
    """``text`` with each comment and each string literal other than an f-string made a space."""
    return _STRIP.sub(r"\g<keep> ", text)


# --- the words ------------------------------------------------------------------------------

_IDENTIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _alternatives(words) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


# (1) module tensors (substrings of the lower-cased code), and rotary sinks (whole words).
MODULE_TENSOR_WORDS: Tuple[str, ...] = ("buffer", "parameter")
SINK_CALLS: Tuple[str, ...] = ("cos", "sin", "cos_", "sin_", "polar")
ATTENTION_SINKS: Tuple[str, ...] = ("attn_mask", "baddbmm", "addbmm", "addmm")
CAST_WORDS: Tuple[str, ...] = ("to", "half", "bfloat16", "type", "type_as")
# (2) calls that give frequencies, slopes or a complex rotation by themselves.
ROLE_CALLS: Tuple[str, ...] = ("logspace", "polar")
# (3) exponentials of positions.
EXP_CALLS: Tuple[str, ...] = ("exp", "exp2")
# (4) powers spelled as calls.
POW_CALLS: Tuple[str, ...] = ("pow", "float_power")
# Words that give POSITIONS or FREQ_INDEX, as substrings of the lower-cased code.
POSITION_WORDS: Tuple[str, ...] = ("range", "linspace", "cumsum")

# Each pattern starts with a literal, so that the engine can search for it quickly; whether the
# character before a match ends an identifier is checked by :func:`_starts_word`.
_END = "(?![A-Za-z0-9_])"
_MODULE_TENSOR = re.compile(_alternatives(MODULE_TENSOR_WORDS))
_SINK_CALL = [re.compile(re.escape(w) + _END) for w in SINK_CALLS]
_ATTENTION_SINK = [re.compile(re.escape(w) + _END) for w in ATTENTION_SINKS]
_CAST = [re.compile(re.escape(w) + _END) for w in CAST_WORDS]
_ROLE_CALL = [re.compile(re.escape(w) + _END) for w in ROLE_CALLS]
_EXP_CALL = [re.compile(re.escape(w) + _END) for w in EXP_CALLS]
_POSITION_WORD = re.compile(_alternatives(POSITION_WORDS))
_MUL_ASSIGN = re.compile(r"\*=")
_LOOP = re.compile(f"(?:for|while){_END}")

# Powers. ``**`` right after ``(``, ``,`` or ``{`` (blanks and line breaks between) unpacks a
# mapping; every other ``**`` is the power operator. A power whose exponent is a numeric literal
# (``x ** 2``, ``x**-0.5``, ``x ** (2)``, ``x.pow(2)``, ``torch.pow(x, 2)``) gives no role to its
# result but ``POW2`` (when the base is 2); any other power may give ``FREQS`` or ``SLOPES``.
_NUMBER = r"(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d[\d_]*)?"
# What may follow a literal exponent and leave it whole: a closing bracket, a separator, an
# operator that binds less tightly than ``**``, a keyword, the end, or a line break that is not
# followed by something that continues the literal (``**``, ``.``, ``(``, ``[``).
_AFTER_LITERAL = (r"(?=[ \t]*(?:[)\]},:;=<>!+\-/%@&|^~]|\*(?!\*)|(?:if|else|for|and|or|in|is|not)(?![A-Za-z0-9_])"
                  r"|\Z|(?:\r?\n|\r)(?![\s\\]*(?:\*\*|[.(\[]))))")
_LITERAL_EXPONENT = re.compile(
    rf"=?[ \t]*(?:\([\s]*[-+]?[\s]*{_NUMBER}[\s]*\)|[-+]?[ \t]*{_NUMBER}){_AFTER_LITERAL}")
_STARSTAR = re.compile(r"\*\*")
# A string literal right before ``**`` is an operand (``"a" ** x``), but the code text has a
# space there, which could read as ``(**x``; the raw text is searched for that case.
_STRING_POWER = re.compile(r"[\"'][\s\\]*\*\*")
_POW_CALL = [re.compile(re.escape(w) + _END) for w in POW_CALLS]
# ``pow(<literal>)`` (method form) or ``pow(<simple base>, <literal>)`` (function form).
_LITERAL_POW_ARGS = re.compile(rf"[ \t]*\([\s]*(?:[\w.]+[\s]*,[\s]*)?[-+]?[\s]*{_NUMBER}[\s]*\){_AFTER_LITERAL}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _starts_word(text: str, start: int) -> bool:
    """Whether ``text[start]`` starts an identifier."""
    return start == 0 or text[start - 1] not in _IDENTIFIER_CHARS


def _has_word(patterns, text: str) -> bool:
    """Whether one of ``patterns`` (each a word) matches ``text`` at the start of an identifier."""
    return any(_starts_word(text, m.start()) for p in patterns for m in p.finditer(text))


def _powers(text: str, code: str) -> Tuple[bool, bool]:
    """(whether ``code`` has a power at all, whether one may give its result a role)."""
    if _STRING_POWER.search(text):
        return True, True
    any_power = False
    for match in _STARSTAR.finditer(code):
        i = match.start() - 1
        while i >= 0 and code[i] in " \t\r\n\f\\":
            i -= 1
        if i >= 0 and code[i] in "(,{":
            continue  # unpacking: f(**kwargs), {**a}
        any_power = True
        if not _LITERAL_EXPONENT.match(code, match.end()):
            return True, True
    for pattern in _POW_CALL:
        for match in pattern.finditer(code):
            any_power = True
            if not _LITERAL_POW_ARGS.match(code, match.end()):
                return True, True
    return any_power, False


def _identifiers_normalise(code: str) -> bool:
    """Whether a non-ASCII character of ``code`` can become ASCII in an identifier."""
    for char in set(_NON_ASCII.findall(code)):
        folded = unicodedata.normalize("NFKC", char)
        if any(c.isascii() for c in folded + folded.lower() + char.lower()):
            return True
    return False


def may_have_findings(text: str) -> bool:
    """False only if no analysis rule (POS1xx, POS2xx) can report anything in ``text``."""
    code = code_text(text)
    if not code.isascii() and _identifiers_normalise(code):
        return True
    lower = code.lower()
    if _has_word(_ROLE_CALL, lower):
        return True
    if _has_word(_SINK_CALL, lower) and (_MODULE_TENSOR.search(lower) or _POSITION_WORD.search(lower)
                                          or _has_word(_CAST, lower)):
        return True
    if _has_word(_ATTENTION_SINK, lower) and _POSITION_WORD.search(lower):
        return True
    any_power, role_power = _powers(text, code)
    if (role_power or _has_word(_EXP_CALL, lower)) and _POSITION_WORD.search(lower):
        return True
    if any_power and any(code[m.start() - 1:m.start()] != "*" for m in _MUL_ASSIGN.finditer(code)):
        return _LOOP.search(code) is not None
    return False


def syntax_ok(text: str, path: str) -> bool:
    """True if ``text`` certainly parses with ``ast.parse``; False if it may not (then parse it
    with ``ast.parse`` to find out)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(text, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
