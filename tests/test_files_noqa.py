"""Glob matching, the is-this-Python test and noqa parsing, on their own."""

from __future__ import annotations

import pytest

from poslint.core.diagnostics import Diagnostic
from poslint.engine.files import glob_matches, is_python_source
from poslint.engine.noqa import parse_suppressions


@pytest.mark.parametrize("pattern, path, expected", [
    ("build", "build/x.py", True),
    ("build", "src/build/x.py", True),
    ("build/", "src/build/x.py", True),
    ("build", "src/builder/x.py", False),
    ("*_pb2.py", "a/b/c_pb2.py", True),
    ("src/gen", "src/gen/x.py", True),
    ("src/gen", "lib/src/gen/x.py", False),
    ("./src/*.py", "src/a.py", True),
    ("/src/*.py", "src/a.py", True),
    ("tests/*", "tests/unit/test_a.py", True),
])
def test_glob_matches(pattern, path, expected):
    assert glob_matches(pattern, path) is expected


@pytest.mark.parametrize("data, expected", [
    (b"#!/usr/bin/env python3\nprint(\n", True),
    (b"#!/usr/bin/python3.11 -u\r\n", True),
    (b"\xef\xbb\xbf#!/usr/bin/env python\n", True),
    (b"#!/bin/sh\nexec python \"$0\"\n", False),
    (b"import torch\n", True),
    (b"class A:\n    pass\n", True),
    (b"hello\n", False),
    (b"Some prose, not code.\n", False),
    (b"\xff\xfe\x00", False),
])
def test_is_python_source(data, expected):
    assert is_python_source(data) is expected


def diag(line: int, code: str = "POS101") -> Diagnostic:
    return Diagnostic("m.py", line, 1, line, 2, code, "msg")


def test_noqa_comment_after_string_on_untokenizable_file():
    # The unclosed bracket makes tokenize fail; the line scan still finds the comment.
    text = 'x = ("a",  # noqa: POS101\n'
    assert parse_suppressions(text).suppresses(diag(1))


def test_noqa_codes_and_lines():
    text = "a = 1  # noqa: POS101, POS2\nb = 2  # NoQA\nc = '# noqa'\n"
    s = parse_suppressions(text)
    assert s.suppresses(diag(1)) and s.suppresses(diag(1, "POS201")) and not s.suppresses(diag(1, "POS102"))
    assert s.suppresses(diag(2, "POS999"))
    assert not s.suppresses(diag(3))


def test_file_level_noqa_with_codes_accumulates():
    s = parse_suppressions("# poslint: noqa: POS101\n# poslint: noqa: POS102\nx = 1\n")
    assert s.suppresses(diag(3)) and s.suppresses(diag(3, "POS102")) and not s.suppresses(diag(3, "POS103"))
