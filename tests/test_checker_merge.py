"""One place reported more than once (a frequency table feeding an image's rows and its columns,
or a function analysed in two calling contexts) is one finding, whose fix does what every
report's fix does, or is dropped when they disagree about the same text."""

from poslint.core.diagnostics import Diagnostic, Edit, Fix
from poslint.engine.checker import _merged


def finding(*edits, safety="safe"):
    return Diagnostic("m.py", 3, 5, 3, 9, "POS102", "frequencies ...",
                      Fix(tuple(Edit(*e) for e in edits), safety, "cast the frequencies to float32"))


def test_the_edits_of_both_reports_are_kept_once():
    merged = _merged(finding((10, 20, "a"), (40, 40, ".to(x)")), finding((10, 20, "a"), (60, 60, ".to(x)")))
    assert [(e.start, e.end, e.replacement) for e in merged.fix.edits] == [
        (10, 20, "a"), (40, 40, ".to(x)"), (60, 60, ".to(x)")]
    assert merged.fix.safety == "safe"


def test_the_merged_fix_is_as_unsafe_as_its_least_safe_part():
    assert _merged(finding((1, 2, "a")), finding((5, 5, "b"), safety="unsafe")).fix.safety == "unsafe"


def test_edits_that_disagree_about_the_same_text_leave_no_fix():
    assert _merged(finding((10, 20, "a")), finding((15, 25, "b"))).fix is None
    assert _merged(finding((10, 10, "a")), finding((10, 10, "b"))).fix is None


def test_a_report_without_a_fix_leaves_none():
    without = Diagnostic("m.py", 3, 5, 3, 9, "POS102", "frequencies ...", None)
    assert _merged(finding((1, 2, "a")), without).fix is None
