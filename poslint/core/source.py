"""Reading source files exactly: encoding, BOM and line endings, plus offset <-> (line, col) mapping."""

from __future__ import annotations

import bisect
import codecs
import re
import tokenize
from dataclasses import dataclass


class UndecodableSource(Exception):
    """The bytes cannot be decoded with the declared (or default UTF-8) encoding."""


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _first_lines(data: bytes):
    """A ``readline`` over the first two lines of ``data``, ending lines at LF, CRLF or a lone CR
    as Python's own tokenizer does when it looks for the coding cookie (``io.BytesIO.readline``
    knows only LF, so a file with old Mac line endings would be one long first line)."""
    lines = []
    position = 0
    while len(lines) < 2 and position < len(data):
        match = _LINE_END.search(data, position)
        end = match.end() if match else len(data)
        lines.append(data[position:end])
        position = end
    return iter(lines).__next__


@dataclass
class SourceText:
    text: str  # decoded, BOM stripped, line endings as in the file
    encoding: str
    bom: bool

    @classmethod
    def from_bytes(cls, data: bytes) -> "SourceText":
        bom = data.startswith(codecs.BOM_UTF8)
        body = data[len(codecs.BOM_UTF8):] if bom else data
        try:
            encoding, _ = tokenize.detect_encoding(_first_lines(data))
        except SyntaxError as exc:
            if str(exc).startswith("invalid or missing encoding declaration"):
                # No cookie, and the first two lines are not UTF-8: say where and why.
                try:
                    body.decode("utf-8")
                except UnicodeDecodeError as decode_exc:
                    raise UndecodableSource(f"utf-8: {decode_exc}") from None
            if bom and str(exc).startswith("encoding problem"):
                raise UndecodableSource("the file starts with a UTF-8 byte-order mark, but its coding cookie "
                                        "declares another encoding") from None
            raise UndecodableSource(str(exc)) from None
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        try:
            text = body.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:  # LookupError: not a text encoding, like rot13
            raise UndecodableSource(f"{encoding}: {exc}") from None
        return cls(text=text, encoding=encoding, bom=bom)

    def to_bytes(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


class LineIndex:
    """Maps between character offsets and 1-based lines with 0-based columns.

    ``ast`` reports columns as UTF-8 byte offsets within a line; ``utf8_col_to_offset``
    converts those so that reports and fixes stay exact on non-ASCII lines.
    """

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        i = 0
        n = len(text)
        while True:
            j = text.find("\n", i)
            if j < 0:
                break
            starts.append(j + 1)
            i = j + 1
        # A lone '\r' also ends a line for Python's tokenizer.
        if "\r" in text:
            starts = [0]
            for k, ch in enumerate(text):
                if ch == "\n" or (ch == "\r" and (k + 1 >= n or text[k + 1] != "\n")):
                    starts.append(k + 1)
        self.starts = starts

    def line_text(self, line: int) -> str:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:end]

    def utf8_col_to_offset(self, line: int, byte_col: int) -> int:
        start = self.starts[line - 1]
        line_text = self.line_text(line)
        if line_text.isascii():
            return start + byte_col
        prefix = line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")
        return start + len(prefix)

    def offset_to_position(self, offset: int):
        """Return (1-based line, 0-based character column)."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1]
