"""The fixer on its own: conflict handling, imports, verification. The CLI tests cover files on disk."""

from __future__ import annotations

from poslint.core.diagnostics import Diagnostic, Edit, Fix
from poslint.fix.fixer import add_imports, fix_text, unified_diff, verify


def finding(fix: Fix, line: int = 1) -> Diagnostic:
    return Diagnostic("m.py", line, 1, line, 1, "POS999", "test", fix)


def checker(rules):
    """A check function that runs ``rules`` (text -> list of fixes) on each text."""
    def check(text):
        return [finding(fix) for rule in rules for fix in rule(text)], []
    return check


def test_insertions_at_one_offset_conflict_and_land_in_later_passes():
    def add_marker(marker):
        return lambda text: [] if marker in text else [Fix((Edit(0, 0, marker),), "safe", "insert")]

    outcome = fix_text("x = 1\n", checker([add_marker("# a\n"), add_marker("# b\n")]), unsafe_fixes=False)
    assert outcome.error is None
    assert outcome.fixed == 2
    assert outcome.text == "# b\n# a\nx = 1\n"


def test_unsafe_fixes_are_applied_only_when_asked():
    rule = lambda text: [Fix((Edit(4, 5, "2"),), "unsafe", "bump")] if text == "x = 1\n" else []  # noqa: E731
    assert fix_text("x = 1\n", checker([rule]), unsafe_fixes=False).text == "x = 1\n"
    assert fix_text("x = 1\n", checker([rule]), unsafe_fixes=True).text == "x = 2\n"


def test_fix_result_that_does_not_parse_is_discarded():
    rule = lambda text: [Fix((Edit(4, 5, "("),), "safe", "break")] if "(" not in text else []  # noqa: E731
    outcome = fix_text("x = 1\n", checker([rule]), unsafe_fixes=False)
    assert outcome.text == "x = 1\n"
    assert outcome.fixed == 0
    assert outcome.error.startswith("the fixed text does not parse: ")


def test_add_imports_forms_and_existing_imports():
    text = "import torch\n\nx = 1\n"
    assert add_imports(text, {"import torch"}) == text
    assert add_imports(text, {"from torch import nn"}) == "import torch\nfrom torch import nn\n\nx = 1\n"
    assert add_imports("x = 1\n", {"import numpy as np"}) == "import numpy as np\n\nx = 1\n"


def test_add_imports_uses_the_file_newline():
    assert add_imports("x = 1\r\n", {"import torch"}) == "import torch\r\n\r\nx = 1\r\n"


def test_verify():
    assert verify("x = 1\n") is None
    assert verify("x = (\n").startswith("does not parse: ")


def test_unified_diff_marks_missing_final_newline():
    assert unified_diff("m.py", "a\n", "b") == ("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\n"
                                                "\\ No newline at end of file\n")
