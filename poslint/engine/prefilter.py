r"""A text prefilter that decides, without parsing, that no analysis rule can fire on a file.

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
  attention as a bias (``attn_mask=``, ``attn_bias=``, the first argument of ``baddbmm``/``addbmm``/``addmm``
  or of xformers' ``LowerTriangularMaskWithTensorBias``, or a term of what ``softmax``/``log_softmax``
  normalise), any operand of no role multiplied by a ``POSITIONS`` grid (``Interpreter.product``).
  ``ANGLES`` and ``BIAS`` are born only in ``product``, and ``ANGLES`` also in ``cast``: a value
  of unknown role cast to 16 bits whose result reaches both cos and sin.
  ``ROTARY_COMPLEX`` is born in ``torch.polar``, or from ``ANGLES`` (``exp`` of complex angles,
  angles times ``1j``) or their cos/sin (``view_as_complex(stack([cos, sin], -1))``,
  ``complex(cos, sin)``), so it needs a product as well, except for ``polar``.

So a file can only have a finding if a ``FREQS``, ``SLOPES`` or ``ROTARY_COMPLEX`` value can be
born in it, or a buffer or parameter meets ``cos``/``sin``/``polar``. Those roles are born only
here (the rest of the interpreter only carries, merges or drops roles), and names give none:

1. a rotary sink (``cos``, ``sin`` or ``polar``) together with a module tensor (the words
   ``buffer``, ``parameter`` or ``linear``: ``register_buffer``, ``nn.Buffer``, ``nn.Parameter``,
   ``register_parameter``, and ``nn.Linear``, whose call multiplies by the weight it holds), with a positional word (below), or with a cast (the words ``to``,
   ``half``, ``bfloat16``, ``type``, ``type_as``); or an attention-bias sink (``attn_mask``,
   ``attn_bias``, ``baddbmm``, ``addbmm``, ``addmm``, ``softmax``, which ``log_softmax`` contains,
   xformers' ``LowerTriangularMaskWithTensorBias``) together with a positional word;
2. ``logspace`` (frequencies or slopes), ``polar`` (a complex rotation), and the third-party
   helpers that give frequencies or an ALiBi bias by their summary (``ROPE_INIT_FUNCTIONS``,
   transformers' rope-init functions and ``build_alibi_tensor``, diffusers' timestep embedders:
   :data:`poslint.analysis.library_summaries.ROLE_WORDS`), which a file names to call;
3. ``exp``/``exp2`` of a value with the ``POSITIONS`` or ``FREQ_INDEX`` role, or ``exp`` of a
   ``linspace`` between logarithms (the ``LOGARITHM`` role: the same words) (``reciprocal``
   and ``1 / x`` of such a growing ``exp`` or power give frequencies too, so they need (3) or (4));
4. a power (``**``, ``**=``, ``pow``, ``float_power``) whose exponent has the ``POSITIONS`` or
   ``FREQ_INDEX`` role; ``full(shape, r)`` keeps the ``POW2`` role of ``r``, which needs a power;
5. ``x *= r`` in a loop where ``r`` has the ``POW2`` role (ALiBi's geometric slopes). ``POW2``
   is born from a power (``2 ** k``, ``math.pow(2, k)``), so this needs ``*=``, a loop and a power.

``POSITIONS`` and ``FREQ_INDEX`` are born only from ``range`` (a loop or comprehension over the
builtin, or ``torch.range``; ``full(shape, f(i))`` of its counter ``i`` is positions too),
``arange``, ``linspace`` and ``cumsum``. A product also takes any
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

The raw test
============

Blanking strings and comments is most of the cost of the code test, and most files have none of
its words anyway. :func:`raw_may_have_findings` looks for them in the raw bytes first, before
anything is decoded or blanked, and a file it dismisses is one the code test dismisses too
(``may_have_findings`` is the same with it as without it). Let *T* be the text the bytes decode
to, *C* the code text of *T*, and *R* the bytes.

* It passes a file whose first two lines hold a coding cookie that is not UTF-8, and one whose
  non-ASCII characters (the non-ASCII bytes, decoded together: in UTF-8 they are whole
  sequences) include one that the code test's NFKC or lower-casing check passes. Otherwise *T*
  is *R* decoded as UTF-8: every ASCII character of *T* is the same byte of *R*, in the same
  order, every non-ASCII character is bytes over 127, and lower-casing *T* makes the same ASCII
  letters that lower-casing *R* does (no other character lower-cases to ASCII).
* *C* is *T* with some strings and comments each made one space. A piece of *C* without those
  spaces is a piece of *R*, and the character before or after such a piece in *R* is the same
  as in *C*, or a quote, or a line break (a comment ends before one; a string starts and ends
  with a quote; prefixes stay in *C*), none of them part of a word. So a word that starts an
  identifier in *C* does in *R*, and a substring of *C* is one of *R*: the words of (1) to (5)
  are looked for in *R* as the code test looks for them in *C*, but only the sinks of (1) (not
  what must go with them), and ``*=`` and the loop of (5) even in strings and comments.
* Powers: every ``**``, ``pow`` and ``float_power`` of *C* is one of *R*. A ``**`` counts as
  unpacking only when the character before it, across spaces, tabs and line breaks, is ``(``,
  ``,`` or ``{`` on a line without ``#``: that character is then code (a comment would need a
  ``#`` on its line, and a string that held it would hold the ``**``), and the code test skips
  the same blanks to it. A ``**`` after a quote, across blanks, backslashes and bytes over 127
  (which hold every non-ASCII blank that ``\s`` matches in *T*), may be the code test's string
  operand, so it gives a role. An exponent or call is literal only where the code test's
  pattern matches the same characters: the raw patterns use its alternatives with fewer
  characters (spaces and tabs for ``\s``, ASCII for ``\d`` and ``\w``), and a literal at the end
  of a line only when the next line goes on at once with a name, a digit or a closing bracket,
  where the code test's look-ahead holds too (blank lines and comments in between are left to
  the code test).

So wherever the code test finds the words of a finding, the raw test finds them too. Both are
checked on every file of the test trees and of transformers' models by ``tests/test_prefilter.py``.

POS001
======

A file that fails the prefilter is not analysed. Whether it parses is still decided, when
POS001 is selected, by :func:`syntax_ok`: CPython's parser and symbol-table pass in C
(``symtable``), which builds no ``ast`` objects and is about twice as fast as ``ast.parse``.
It accepts a subset of what ``ast.parse`` accepts, so a file it rejects is parsed again with
``ast.parse`` to report exactly what a full check reports.
"""

from __future__ import annotations

import codecs
import re
import symtable
import unicodedata
import warnings
from typing import Tuple

from poslint.analysis.library_summaries import ROLE_WORDS as LIBRARY_ROLE_WORDS

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
    "_grown_list": ("FREQS", "POW2", "SLOPES"),  # a list keeps the roles of what is appended to it
    "_eval_ListComp": ("FREQ_INDEX",),
    "library_call": ("BIAS", "FREQS"),  # transformers' rope-init functions and ALiBi builders, by name: (2)
    "_embed_timesteps": ("FREQS",),  # diffusers' timestep embedders, by name: (2)
    "_library_rotation": ("FREQS", "POSITIONS", "POSITIONS"),  # rotary-embedding-torch's RotaryEmbedding, by name: (2)
    "_library_rotary_member": ("FREQS",),  # a subclass of it, which names it: (2)
    "_library_positions": ("POSITIONS",),  # its get_seq_pos, read by such a subclass: (2)
    # transformers' rotary classes, by name: the inv_freq of a subclass's base, and the positions and
    # inv_freq of a call of a held instance, and that inv_freq read from the instance: (2)
    "_library_base_buffer": ("FREQS",),
    "_transformers_rotation": ("FREQS", "POSITIONS"),
    "_transformers_rotary_buffer": ("FREQS", "FREQS"),
    "_flash_rotation": ("FREQS", "POSITIONS"),  # flash-attention's RotaryEmbedding, by name: (2)
    # a transformers loader's model, by name: the inv_freq read from it (a rotary word, (1))
    "_loaded_part": ("FREQS", "FREQS"),
    "negated": ("ANGLES", "BIAS", "FREQS", "SLOPES"),  # reads roles only
    "_note_grid_axes": ("ANGLES", "ROTARY_COMPLEX"),  # reads roles only
    "power_role": ("FREQS", "SLOPES"),
    # SLOPES, FREQS from 1 / (a growing power): they need the power of (4); FREQS and SLOPES once
    # more: the test that records a creation (FREQS, SLOPES or a growing power), which gives no role
    "_binop": ("FREQS", "FREQS", "FREQS", "FREQS", "FREQ_INDEX", "POW2", "POW2", "POW2", "ROTARY_COMPLEX", "SLOPES",
              "SLOPES", "SLOPES", "SLOPES"),
    "exec_stmt": ("FREQ_INDEX", "SLOPES"),
    # FREQS, SLOPES: the unknown operand of a product confirmed by cos/sin, or by attention;
    # POSITIONS: guessed angles that a product with FREQS takes as its positions (it has a factor);
    # FREQS again: guessed angles (a product with FREQS) that positions multiply, blended frequencies;
    # and a growing power (GROWTH, GROWTH2: the power of (4)) that positions multiply into cos/sin;
    # FREQS again: of two POSITIONS grids into cos/sin, the vector along the last axis, or the
    # operand giving the channels of ``outer`` or an einsum that sums nothing (sink and positional
    # words of (1)); a POSITIONS grid giving those channels times an input into cos/sin (likewise);
    # and a growing table the module holds times an input into cos/sin (the power of (4), and a
    # sink word); FREQS again: a geometric table (SLOPES, from the power of (4)) whose product
    # reaches cos/sin (a sink word)
    "product": ("ANGLES", "BIAS", "FREQS", "FREQS", "FREQS", "FREQS", "FREQS", "FREQS", "FREQS", "FREQS",
                "POSITIONS", "SLOPES"),
    # roles.TABLE_ROLES: a constant that tests and removes roles (a table's spacings), gives none
    "<module>": ("FREQS", "SLOPES"),
    # FREQS: exp of POSITIONS/FREQ_INDEX (3), exp of a linspace of logarithms (3), reciprocal of a growth
    "_tensor_method": ("FREQS", "FREQS", "FREQS", "POSITIONS", "ROTARY_COMPLEX", "SLOPES", "SLOPES"),
    # ROTARY_COMPLEX: polar, and view_as_complex/complex of cos/sin (TRIG, which needs a product);
    # POSITIONS: ``full(shape, 1.0 - i * h)`` of a loop's counter (its FREQ_INDEX, born from ``range``)
    "_torch_function": ("FREQS", "FREQS", "POSITIONS", "POW2", "POW2", "ROTARY_COMPLEX", "ROTARY_COMPLEX", "SLOPES"),
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
MODULE_TENSOR_WORDS: Tuple[str, ...] = ("buffer", "parameter", "linear")
SINK_CALLS: Tuple[str, ...] = ("cos", "sin", "cos_", "sin_", "polar")
ATTENTION_SINKS: Tuple[str, ...] = ("attn_mask", "attn_bias", "baddbmm", "addbmm", "addmm", "softmax",
                                    "lowertriangularmaskwithtensorbias")
CAST_WORDS: Tuple[str, ...] = ("to", "half", "bfloat16", "type", "type_as")
# (2) calls that give frequencies, slopes or a complex rotation by themselves.
ROLE_CALLS: Tuple[str, ...] = ("logspace", "polar", *sorted(LIBRARY_ROLE_WORDS))
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
# A parenthesised exponent may be arithmetic of numeric literals (``x ** (1 / 3)``): no role either.
_CONSTANT = rf"[-+]?[\s]*{_NUMBER}"
_CONSTANT_ARITHMETIC = rf"\([\s]*{_CONSTANT}(?:[\s]*(?:\*\*|//|[-+*/%])[\s]*{_CONSTANT})*[\s]*\)"
_LITERAL_EXPONENT = re.compile(rf"=?[ \t]*(?:{_CONSTANT_ARITHMETIC}|[-+]?[ \t]*{_NUMBER}){_AFTER_LITERAL}")
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
    return any(map(_folds_to_ascii, set(_NON_ASCII.findall(code))))


def _folds_to_ascii(char: str) -> bool:
    """Whether lower-casing turns ``char`` into ASCII, or it may stand in an identifier (itself or
    its NFKC form) and NFKC turns it into ASCII. Outside strings and comments, Python takes a non-ASCII
    character only in an identifier, so any other (``…``, ``×``) is in an f-string's text or
    makes the file fail to parse, and no analysis rule can see it."""
    if any(c.isascii() for c in char.lower()):
        return True  # words are matched on the lower-cased text
    folded = unicodedata.normalize("NFKC", char)
    if not (("a" + char).isidentifier() or ("a" + folded).isidentifier()):
        return False
    return any(c.isascii() for c in folded + folded.lower())


def may_have_findings(text: str) -> bool:
    """False only if no analysis rule (POS1xx, POS2xx) can report anything in ``text``: the raw
    test first, which is cheap, then the code test for the files it does not dismiss."""
    return raw_may_have_findings(text.encode("utf-8", "surrogatepass")) and code_may_have_findings(text)


def code_may_have_findings(text: str) -> bool:
    """The code test: the argument above, on ``text`` without its comments and strings."""
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


# --- the raw test ----------------------------------------------------------------------------
# The code test's words and powers, looked for in the raw bytes, before anything is decoded or
# blanked; see "The raw test" above for why a file it dismisses is one the code test dismisses.
# Each pattern starts with a literal, as above; bytes patterns know only ASCII (``\d``).

_RAW_ROLE_OR_SINK = [(w.encode(), re.compile(re.escape(w.encode()) + _END.encode())) for w in ROLE_CALLS + SINK_CALLS]
_RAW_ATTENTION_OR_EXP = [(w.encode(), re.compile(re.escape(w.encode()) + _END.encode()))
                         for w in ATTENTION_SINKS + EXP_CALLS]
_RAW_POSITION_WORDS = tuple(w.encode() for w in POSITION_WORDS)
_RAW_MUL_ASSIGN = re.compile(rb"\*=")
_RAW_LOOP = re.compile(_LOOP.pattern.encode())
_RAW_STARSTAR = re.compile(rb"\*\*")
_RAW_POW_CALL = [re.compile(p.pattern.encode()) for p in _POW_CALL]
# What ends a literal exponent for sure: as _AFTER_LITERAL, but a line break only when the next
# line goes on with a name, a digit or a closing bracket (blank lines and comments are left to
# the code test), and blanks are spaces and tabs.
_RAW_AFTER_LITERAL = (rb"(?=[ \t]*(?:[)\]},:;=<>!+\-/%@&|^~]|\*(?!\*)|(?:if|else|for|and|or|in|is|not)(?![A-Za-z0-9_])"
                      rb"|\Z|(?:\r?\n|\r)[ \t]*[A-Za-z0-9_)\]}]))")
_RAW_NUMBER = _NUMBER.encode()
_RAW_CONSTANT = rb"[-+]?[ \t]*" + _RAW_NUMBER
_RAW_LITERAL_EXPONENT = re.compile(
    rb"=?[ \t]*(?:\([ \t]*" + _RAW_CONSTANT + rb"(?:[ \t]*(?:\*\*|//|[-+*/%])[ \t]*" + _RAW_CONSTANT + rb")*[ \t]*\)"
    rb"|[-+]?[ \t]*" + _RAW_NUMBER + rb")" + _RAW_AFTER_LITERAL)
_RAW_LITERAL_POW_ARGS = re.compile(
    rb"[ \t]*\([ \t]*(?:[A-Za-z0-9_.]+[ \t]*,[ \t]*)?[-+]?[ \t]*" + _RAW_NUMBER + rb"[ \t]*\)" + _RAW_AFTER_LITERAL)
_LINE_END = re.compile(rb"\r\n|\r|\n")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_ASCII_BYTES = bytes(range(128))
_IDENTIFIER_BYTES = frozenset("".join(sorted(_IDENTIFIER_CHARS)).encode())
_UNPACK_BLANKS = frozenset(b" \t\r\n\f")  # what the code test skips before ``**``, but ``\``
# What ``\s`` matches in text, and ``\``, as bytes; a byte over 127 stands for a non-ASCII blank.
_STRING_POWER_BLANKS = frozenset(b" \t\r\n\f\v\x1c\x1d\x1e\x1f\\")


def raw_may_have_findings(data: bytes) -> bool:
    """False only if :func:`may_have_findings` is False for the text that ``data`` decodes to."""
    if _bytes_undecided(data):
        return True
    lower = data.lower()  # ASCII letters only: a non-ASCII one that lower-cases to ASCII was met above
    if _has_raw_word(_RAW_ROLE_OR_SINK, lower):
        return True
    positional = any(word in lower for word in _RAW_POSITION_WORDS)
    if positional and _has_raw_word(_RAW_ATTENTION_OR_EXP, lower):
        return True
    any_power, role_power = _raw_powers(data)
    if role_power and positional:
        return True
    return any_power and any(data[m.start() - 1:m.start()] != b"*" for m in _RAW_MUL_ASSIGN.finditer(data)) \
        and _RAW_LOOP.search(data) is not None


def _bytes_undecided(data: bytes) -> bool:
    """Whether ``data`` may not be UTF-8 (a coding cookie names another encoding), or has a
    non-ASCII character that may become ASCII in an identifier or when lower-cased."""
    head = data
    ends = _LINE_END.finditer(data)
    for _ in range(2):  # the cookie is on one of the first two lines
        end = next(ends, None)
        if end is None:
            break
        head = data[:end.end()]
    cookie = _COOKIE.search(head)
    if cookie is not None:
        try:
            if codecs.lookup(cookie.group(1).decode("ascii")).name != "utf-8":
                return True
        except LookupError:
            return True
    if data.isascii():
        return False
    try:  # UTF-8 sequences are runs of non-ASCII bytes: together they are the non-ASCII characters
        chars = set(data.translate(None, _ASCII_BYTES).decode("utf-8"))
    except UnicodeDecodeError:
        return True
    return any(map(_folds_to_ascii, chars))


def _has_raw_word(words, data: bytes) -> bool:
    """:func:`_has_word` for bytes; ``words`` pairs each word with its pattern (``in`` is faster
    than a pattern for a word that is not there)."""
    return any(m.start() == 0 or data[m.start() - 1] not in _IDENTIFIER_BYTES
               for word, pattern in words if word in data for m in pattern.finditer(data))


def _raw_powers(data: bytes) -> Tuple[bool, bool]:
    """:func:`_powers` for the raw bytes: True where the code test may find a power, or one that
    may give a role."""
    any_power = False
    for match in _RAW_STARSTAR.finditer(data):
        i = match.start() - 1
        while i >= 0 and data[i] in _UNPACK_BLANKS:
            i -= 1
        if i >= 0 and data[i] in b"(,{" and b"#" not in data[_line_start(data, i):i]:
            continue  # unpacking, and the bracket or comma is not in a comment
        any_power = True
        if _after_quote(data, match.start()) or not _RAW_LITERAL_EXPONENT.match(data, match.end()):
            return True, True
    for pattern in _RAW_POW_CALL:
        for match in pattern.finditer(data):
            any_power = True
            if not _RAW_LITERAL_POW_ARGS.match(data, match.end()):
                return True, True
    return any_power, False


def _line_start(data: bytes, i: int) -> int:
    return max(data.rfind(b"\n", 0, i), data.rfind(b"\r", 0, i)) + 1


def _after_quote(data: bytes, start: int) -> bool:
    """Whether a quote comes before ``start`` across what ``_STRING_POWER`` skips in the text."""
    i = start - 1
    while i >= 0 and (data[i] in _STRING_POWER_BLANKS or data[i] > 127):
        i -= 1
    return i >= 0 and data[i] in b"\"'"


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
