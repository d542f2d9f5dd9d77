"""Reading source files exactly: encoding, BOM and line endings, plus offset <-> (line, col) mapping."""

from __future__ import annotations

import bisect
import codecs
import io
import tokenize
from dataclasses import dataclass


class UndecodableSource(Exception):
    """The bytes cannot be decoded with the declared (or default UTF-8) encoding."""


@dataclass
class SourceText:
    text: str  # decoded, BOM stripped, line endings as in the file
    encoding: str
    bom: bool

    @classmethod
    def from_bytes(cls, data: bytes) -> "SourceText":
        bom = data.startswith(codecs.BOM_UTF8)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise UndecodableSource(str(exc)) from None
        body = data[len(codecs.BOM_UTF8):] if bom else data
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        try:
            text = body.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
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
