"""The top-level statements of a module, read from its text without parsing it (issue 16).

The project prefilter's definition index (:mod:`poslint.engine.imports`) needs, for each name a
module binds at top level (in its ``if``/``try``/``with``/``for``/``while`` blocks too, as
:func:`~poslint.analysis.object_model.flattened` reads them), the lines of the statement that
binds it last, and for a class the lines of each method, of each other statement of its body and
of its bases; for an import, what it names. :func:`outline` finds them from the text: the
lines of each logical line (strings, comments, brackets and backslash continuations followed as
the tokenizer does), their indentation, and a few words of each top-level one.

It gives exactly what the module's ``ast`` tree gives, or None where it is not sure: a line
break other than ``\\n`` and ``\\r\\n``, a tab or form feed in indentation, a string left open,
unbalanced brackets, a ``;`` or a compound statement on one line at top level, ``match``/``type``
statements, non-ASCII code at top level, an assignment target that holds a keyword argument, a
lambda or an f-string, and anything that does not read as a statement; the caller parses the
module then. For a module that does not parse it may still give an outline (its tree would be
empty); :mod:`poslint.engine.imports` allows for that. ``tests/test_outline.py`` compares it
with the tree on every module of the test trees, of transformers and of generated programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

Lines = Tuple[int, int]  # first and last line, 1-based, both included


@dataclass(frozen=True)
class ClassOutline:
    """A class: its lines (from the ``class`` line), its methods' (by name, later ones replacing
    earlier ones), the other statements of its body, and each base."""

    lines: Lines
    methods: Tuple[Tuple[str, Lines], ...]
    rest: Tuple[Lines, ...]
    bases: Tuple[Lines, ...]


@dataclass(frozen=True)
class Outline:
    """What a module binds at top level: ``own`` maps each name a ``def``, ``class`` or assignment
    binds to the lines of the last such statement (a :class:`ClassOutline` for a class);
    ``imported`` each name an import binds to ``(level, module, name)`` (``from`` imports, ``name``
    never ``*``) or ``(0, module, "")`` (``import a.b as c``), the last import winning."""

    own: Dict[str, object]
    imported: Dict[str, Tuple[int, Optional[str], str]]


class _Unsure(Exception):
    pass


_ESCAPE = r"\\(?:\r\n|[\s\S])"
_STRING = re.compile(
    "#[^\\r\\n]*|"
    + "|".join((
        '"""[^"\\\\]*(?:(?:' + _ESCAPE + '|"(?!""))[^"\\\\]*)*"""',
        "'''[^'\\\\]*(?:(?:" + _ESCAPE + "|'(?!''))[^'\\\\]*)*'''",
        '"[^"\\\\\\r\\n]*(?:' + _ESCAPE + '[^"\\\\\\r\\n]*)*"',
        "'[^'\\\\\\r\\n]*(?:" + _ESCAPE + "[^'\\\\\\r\\n]*)*'")))
# Line breaks that ``str.splitlines`` knows but the tokenizer does not (or that it counts
# differently): the index numbers lines as ``ast`` does and cuts them as ``splitlines`` does.
_ODD_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_BRACKETS = re.compile(r"[][(){}]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The tokens that tell a top-level statement's kind, at bracket depth 0.
_TOKEN = re.compile(r"[][(){}]|[=!<>:]=|->|\*\*=|//=|>>=|<<=|[-+*/%@&|^]=|=|:|;|\blambda\b")
_COMPOUND = frozenset({"if", "elif", "else", "try", "except", "finally", "with", "for", "while"})
_CLAUSES = frozenset({"elif", "else", "except", "finally"})
_SIMPLE = frozenset({"return", "yield", "raise", "del", "pass", "assert", "global", "nonlocal", "break",
                     "continue", "await", "lambda", "not", "None", "True", "False"})
_SOFT = frozenset({"match", "case", "type"})
_KEYWORDS = frozenset({"and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
                       "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
                       "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
                       "yield", "None", "True", "False"})
_DEF = re.compile(r"(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*[(\[]")
_CLASS = re.compile(r"class\s+([A-Za-z_][A-Za-z0-9_]*)\s*([(:\[])")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*"
_ALIAS = re.compile(rf"({_DOTTED})(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?\Z")
_FROM = re.compile(rf"from\s*(\.*)\s*({_DOTTED})?\s*import\b\s*(.*)\Z", re.S)
_IMPORT = re.compile(r"import\b\s*(.*)\Z", re.S)
# A name in an assignment target: an identifier that is not an attribute (after ``.``) and not
# a string's prefix (before the placeholder of a string).
_TARGET_NAME = re.compile(r"(\.\s*)?\b([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_$])")
_FSTRING_PREFIX = re.compile(r"(?<![A-Za-z0-9_])(?:[fFtT][rR]?|[rR][fFtT])\$")


@dataclass
class _Logical:
    first: int  # index of its first physical line
    last: int
    indent: int
    code: str  # its code, strings as ``$``, without comments and continuations


def outline(text: str) -> Optional[Outline]:
    """The :class:`Outline` of ``text``, or None where the text alone may not tell it."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # one line break for ast and for splitlines both
    if _ODD_BREAKS.search(text):
        return None
    try:
        return _Reader(*_logical_lines(text)).read()
    except _Unsure:
        return None


def _placeholder(match: "re.Match[str]") -> str:
    found = match.group(0)
    if found[0] == "#":
        return ""
    breaks = found.count("\n")
    return "$" + "\\\n" * breaks + ("$" if breaks else "")


def _logical_lines(text: str) -> Tuple[List[_Logical], List[str]]:
    """The logical lines of ``text``, and its lines of code (strings as ``$``, comments gone)."""
    code = _STRING.sub(_placeholder, text)
    if "'" in code or '"' in code:
        raise _Unsure  # a string left open
    lines = code.split("\n")
    out: List[_Logical] = []
    depth = 0
    start = indent = -1
    for number, line in enumerate(lines):
        if start < 0:
            stripped = line.lstrip(" ")
            if not stripped:
                continue
            if stripped[0] in "\t\f\\":
                raise _Unsure
            start, indent = number, len(line) - len(stripped)
        if _BRACKETS.search(line):
            depth += (line.count("(") + line.count("[") + line.count("{")
                      - line.count(")") - line.count("]") - line.count("}"))
            if depth < 0:
                raise _Unsure
        if depth == 0 and not line.endswith("\\"):
            if start == number:
                joined = line
            else:
                joined = " ".join(p[:-1] if p.endswith("\\") else p for p in lines[start:number + 1])
            out.append(_Logical(start, number, indent, joined.strip()))
            start = -1
    if start >= 0:
        raise _Unsure  # an open bracket or a continuation at the end
    return out, lines


class _Reader:
    def __init__(self, logical: List[_Logical], code_lines: List[str]):
        self.logical = logical
        self.code_lines = code_lines
        # For each logical line, the next one that is not inside its block.
        self.after = [len(logical)] * len(logical)
        stack: List[int] = []
        for j, line in enumerate(logical):
            while stack and logical[stack[-1]].indent >= line.indent:
                self.after[stack.pop()] = j
            stack.append(j)
        self.own: Dict[str, object] = {}
        self.imported: Dict[str, Tuple[int, Optional[str], str]] = {}

    def read(self) -> Outline:
        if self.logical:
            if self.logical[0].indent:
                raise _Unsure
            self._block(0, len(self.logical), 0)
        return Outline(self.own, self.imported)

    def _lines(self, j: int) -> Lines:
        """The lines of the statement at logical line ``j``, its block included."""
        return self.logical[j].first + 1, self.logical[self.after[j] - 1].last + 1

    def _block(self, j: int, stop: int, indent: int) -> None:
        while j < stop:
            line = self.logical[j]
            if line.indent != indent:
                raise _Unsure
            self._statement(j, line)
            j = self.after[j]

    def _statement(self, j: int, line: _Logical) -> None:
        code = line.code
        if not code.isascii():
            raise _Unsure
        if code[0] == "@":  # a decorator: the statement's lines start at its def or class
            if self.after[j] != j + 1:
                raise _Unsure
            return
        word = _WORD.match(code)
        first = word.group(0) if word else ""
        follows = code[word.end():].lstrip()[:1] if word else ""
        block = self.after[j] != j + 1
        if first == "def" or (first == "async" and follows == "d"):
            found = _DEF.match(code)
            if found is None:
                raise _Unsure
            self.own[found.group(1)] = self._lines(j)
        elif first == "class":
            found = _CLASS.match(code)
            if found is None or found.group(2) == "[":
                raise _Unsure
            self.own[found.group(1)] = self._class(j)
        elif block:
            events = _depth_zero(code)
            if (first not in _COMPOUND and first != "async") or events[-1:] != [(len(code) - 1, ":")] \
                    or any(t == ";" for _, t in events):
                raise _Unsure  # an indented block under a simple statement, or a compound one on one line
            self._block(j + 1, self.after[j], self.logical[j + 1].indent)
        elif first in _COMPOUND or first == "async":
            raise _Unsure  # a compound statement on one line
        elif first in ("import", "from"):
            self._import(code)
        elif first in _SOFT and follows not in ("=", ".", "(", "[", ",", ")", ":", ""):
            raise _Unsure  # match, case, type statements
        else:
            self._assignment(j, code)

    def _assignment(self, j: int, code: str) -> None:
        """What an assignment binds: the names in its targets (as ``ast.walk`` finds ``Name`` nodes
        in them); nothing for any other simple statement."""
        events = _depth_zero(code)
        if any(t == ";" for _, t in events):
            raise _Unsure
        word = _WORD.match(code)
        if word and word.group(0) in _KEYWORDS:
            return  # return, del, assert, global, pass...: they bind nothing at top level
        targets: List[str] = []
        start = 0
        for position, token in events:
            if token == "lambda":
                break
            if token == "=":
                targets.append(code[start:position])
                start = position + 1
            elif not targets and (token == ":" or token.endswith("=")):
                if token == ":":  # an annotation: its target is before the colon
                    targets.append(code[:position])
                break  # an augmented assignment, a comparison or an annotation binds nothing more
        lines = self._lines(j)
        for target in targets:
            if "=" in target or "lambda" in target or _FSTRING_PREFIX.search(target):
                raise _Unsure
            for attribute, name in _TARGET_NAME.findall(target):
                if not attribute and name not in _KEYWORDS:
                    self.own[name] = lines

    def _import(self, code: str) -> None:
        found = _FROM.match(code)
        if found:
            dots, module, names = found.groups()
            names = names.strip()
            if names.startswith("("):
                if not names.endswith(")"):
                    raise _Unsure
                names = names[1:-1]
            module = re.sub(r"\s+", "", module) if module else None
            aliases = [a.strip() for a in names.split(",")]
            if not aliases[-1] and len(aliases) > 1:
                aliases.pop()  # a trailing comma
            for alias in aliases:
                if alias == "*":
                    continue
                parsed = _ALIAS.match(alias)
                if parsed is None or "." in parsed.group(1):
                    raise _Unsure
                self.imported[parsed.group(2) or parsed.group(1)] = (len(dots), module, parsed.group(1))
            return
        found = _IMPORT.match(code)
        if found is None:
            raise _Unsure
        for alias in (a.strip() for a in found.group(1).split(",")):
            parsed = _ALIAS.match(alias)
            if parsed is None:
                raise _Unsure
            if parsed.group(2):
                self.imported[parsed.group(2)] = (0, re.sub(r"\s+", "", parsed.group(1)), "")

    def _class(self, j: int) -> ClassOutline:
        header = self.logical[j]
        lines = self._lines(j)
        bases, body = self._bases(header)
        if self.after[j] == j + 1:  # on one line: its body follows the colon
            events = _depth_zero(header.code)
            if not body or events[-1] == (len(header.code) - 1, ":"):
                raise _Unsure
            return ClassOutline(lines, (), ((body, lines[1]),), bases)
        if _depth_zero(header.code)[-1:] != [(len(header.code) - 1, ":")]:
            raise _Unsure
        methods: Dict[str, Lines] = {}
        rest: List[Lines] = []
        k, stop = j + 1, self.after[j]
        indent = self.logical[k].indent
        while k < stop:
            line = self.logical[k]
            if line.indent != indent or not line.code.isascii():
                raise _Unsure
            if line.code.startswith("@"):
                if self.after[k] != k + 1:
                    raise _Unsure
            else:
                found = _DEF.match(line.code)
                word = _WORD.match(line.code)
                if found:
                    methods[found.group(1)] = self._lines(k)
                elif word and word.group(0) in _CLAUSES:  # elif, else, except, finally: the same statement
                    if not rest or rest[-1][1] != self.logical[k - 1].last + 1 or not line.code.endswith(":"):
                        raise _Unsure
                    rest[-1] = (rest[-1][0], self._lines(k)[1])
                else:
                    rest.append(self._lines(k))
            k = self.after[k]
        return ClassOutline(lines, tuple(methods.items()), tuple(rest), bases)

    def _bases(self, header: _Logical) -> Tuple[Tuple[Lines, ...], int]:
        """The lines of each base class expression in the header (not of ``metaclass=`` and other
        keywords, nor of ``**`` mappings), and the line where a body on the header's line starts
        (0 if none does)."""
        text = "\n".join(line[:-1] if line.endswith("\\") else line
                         for line in self.code_lines[header.first:header.last + 1])
        found = _CLASS.search(text)
        if found is None:
            raise _Unsure
        number = header.first + 1 + text.count("\n", 0, found.end())
        rest = text[found.end():]
        if found.group(2) == ":":
            return (), _body_line(text[found.end() - 1:], number)
        items: List[Tuple[str, int, int]] = []
        depth, piece, lines = 0, [], []
        for position, char in enumerate(rest):
            if char == "\n":
                number += 1
                continue
            if depth == 0 and char in ",)":
                items.append(("".join(piece), *(lines[:1] + lines[-1:] if lines else (0, 0))))
                piece, lines = [], []
                if char == ")":
                    break
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            piece.append(char)
            if not char.isspace():
                lines.append(number)
        else:
            raise _Unsure
        colon = rest.find(":", position)
        if colon < 0:
            raise _Unsure
        out = []
        for piece, first, last in items:
            item = piece.strip()
            if item and not item.startswith("**") and not _KEYWORD_ARGUMENT.match(item):
                out.append((first, last))
        return tuple(out), _body_line(rest[colon:], number + rest.count("\n", position, colon))


def _body_line(after_header: str, number: int) -> int:
    """The line of the first code after the colon that ``after_header`` starts with (it is on
    line ``number``), or 0 if nothing but blanks follows."""
    body = after_header[1:]
    stripped = body.lstrip()
    return number + body.count("\n", 0, len(body) - len(stripped)) if stripped else 0


_KEYWORD_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)")


def _depth_zero(code: str) -> List[Tuple[int, str]]:
    """The tokens of ``code`` (see ``_TOKEN``) outside brackets, with their positions."""
    out = []
    depth = 0
    for match in _TOKEN.finditer(code):
        token = match.group(0)
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        elif depth == 0:
            out.append((match.start(), token))
    return out
