"""What the files of one run say about the whole project, found before any file is linted.

One fact so far: whether the project lets float32 matmuls run at reduced precision (TF32, or
bfloat16 internally), which POS107 needs and no single file can tell. The settings are:

* ``torch.backends.cuda.matmul.allow_tf32 = <anything but False or 0>``;
* ``torch.set_float32_matmul_precision(<anything but "highest">)``, or any other mention of
  that function (an alias of it, passed around, is a call we cannot see);
* ``torch.backends.fp32_precision = ...``, ``torch.backends.cuda.matmul.fp32_precision = ...``
  or ``torch.backends.mkldnn.matmul.fp32_precision = ...`` with anything but ``"ieee"`` or
  ``"none"`` (``"tf32"``, ``"bf16"``, or a value the text does not show).

The scan is textual and cheap: a file whose bytes hold none of ``tf32``, ``matmul_precision``
and ``fp32_precision`` is dismissed with two substring searches; only the rest is read as text,
without comments and long strings (short literals such as ``"high"`` are kept, since they are
the values). A value the text does not show counts as a setting, so the scan errs towards
reporting. ``torch.backends.cudnn.allow_tf32`` and the cudnn ``fp32_precision`` keys govern
convolutions, not matmuls, and do not count; neither do settings made outside the code (the
``NVIDIA_TF32_OVERRIDE`` environment variable): the ``assume-tf32`` setting covers those. Nor do
settings in tests (``test_*.py``, ``*_test.py``, ``conftest.py``, a ``tests`` folder): they hold
while pytest runs that test.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Iterable, Optional, Tuple

from poslint.analysis.names import is_test_module
from poslint.engine.files import read_source

# The rule that needs the scan: a run without it need not read every file for it.
TF32_RULE = "POS107"
# The reason given when no file sets it but the configuration says to assume it.
ASSUMED = "assume-tf32 is set"

_MARKERS = (b"tf32", b"matmul_precision", b"fp32_precision")

_SHORT_LITERAL = re.compile(r"""(?:'[A-Za-z0-9_]{0,16}'|"[A-Za-z0-9_]{0,16}")\Z""")
_STRIP = re.compile(r"""#[^\r\n]*|'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\r\n])*'|"(?:\\.|[^"\\\r\n])*\"""")
_GAP = r"[\s\\]*"
_ALLOW_TF32 = re.compile(rf"(\w+){_GAP}\.{_GAP}allow_tf32{_GAP}=(?!=){_GAP}(\w+)?")
_SET_PRECISION = re.compile(rf"set_float32_matmul_precision(?:{_GAP}\({_GAP}(['\"]highest['\"]){_GAP}\))?")
_FP32_PRECISION = re.compile(rf"(\w+){_GAP}\.{_GAP}fp32_precision{_GAP}=(?!=){_GAP}(['\"]\w*['\"])?")
# The objects whose ``fp32_precision`` covers matmuls: ``torch.backends`` (every backend) and
# ``<backend>.matmul``.
_MATMUL_OWNERS = frozenset({"backends", "matmul"})


def _code(text: str) -> str:
    """``text`` without comments, and without string literals other than short words."""
    def blank(match):
        literal = match.group(0)
        return literal if _SHORT_LITERAL.match(literal) else " " + "\n" * literal.count("\n")  # keep line numbers

    return _STRIP.sub(blank, text)


def reduced_matmul_setting(text: str) -> Optional[Tuple[int, str]]:
    """The first setting in ``text`` that lets float32 matmuls run at reduced precision: its line
    and what it sets (``allow_tf32``...); None if there is none."""
    if not any(marker.decode() in text for marker in _MARKERS):
        return None
    code = _code(text)
    found = []
    for match in _ALLOW_TF32.finditer(code):
        if match.group(1) != "cudnn" and match.group(2) not in ("False", "0"):
            found.append((match.start(), "allow_tf32"))
    for match in _SET_PRECISION.finditer(code):
        if match.group(1) is None:
            found.append((match.start(), "set_float32_matmul_precision"))
    for match in _FP32_PRECISION.finditer(code):
        if match.group(1) in _MATMUL_OWNERS and (match.group(2) or "").strip("'\"") not in ("ieee", "none"):
            found.append((match.start(), "fp32_precision"))
    if not found:
        return None
    start, what = min(found)
    return code.count("\n", 0, start) + 1, what


def _notebook_code(data: bytes) -> Optional[str]:
    try:
        cells = json.loads(data).get("cells", [])
        return "\n".join("".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                         for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    except (ValueError, AttributeError, TypeError, RecursionError):
        return None


def project_reduced_matmul(found: Optional[str], assume_tf32: bool) -> Optional[str]:
    """The reason a run gives its files: the setting found in them, else :data:`ASSUMED` if asked."""
    return found if found is not None else (ASSUMED if assume_tf32 else None)


def scan_reduced_matmul(paths: Iterable[str]) -> Optional[str]:
    """The first of ``paths`` (in order) that sets float32 matmuls to reduced precision, as
    ``<path> sets <what> on line N``; None if none does. A file that cannot be read is left to the lint
    itself, which reports it."""
    for path in paths:
        if _is_test_file(path):
            continue  # a test's setting holds while pytest runs it, not where the model is trained
        try:
            data = read_source(path)  # never blocks on a named pipe, never reads a device
        except OSError:
            continue
        if not any(marker in data for marker in _MARKERS):
            continue
        text = _notebook_code(data) if path.endswith(".ipynb") else data.decode("utf-8", "replace")
        setting = reduced_matmul_setting(text if text is not None else data.decode("utf-8", "replace"))
        if setting is not None:
            return f"{path} sets {setting[1]} on line {setting[0]}"
    return None


def _is_test_file(path: str) -> bool:
    """A test by pytest's conventions, judged from the file's name and its folder only (an
    absolute path may pass through any folder on its way to the project)."""
    where = PurePath(path)
    return is_test_module(".".join((*where.parent.parts[-1:], where.stem)))
