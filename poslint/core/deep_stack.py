"""Running a function on a thread with a deep stack."""

from __future__ import annotations

import sys
import threading
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

# The analysis and the rules walk the tree recursively, a few Python frames per level, and
# Python's default recursion limit (1000) is too low for an expression nested 1,000 deep, while
# ``ast.parse`` accepts about 3,000 levels. Such a file is analysed again in a thread of its
# own with a larger stack and a higher limit: about 8,000 frames for the deepest tree that
# ``ast.parse`` builds. ``ast.parse`` itself always runs at the default limit (its own depth
# limit grows with the recursion limit), so that everything poslint goes on to handle, libcst
# included (see poslint.fix.fixer), is at most that deep.

DEEP_RECURSION_LIMIT = 20_000
DEEP_STACK_BYTES = 256 * 1024 * 1024


def on_a_deep_stack(function: Callable[[], T]) -> Optional[T]:
    """``function()`` in a thread with a deep stack and recursion limit; None if it fails to
    start or still recurses too deeply. Other exceptions are raised here."""
    outcome: dict = {}

    def target() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))
        try:
            outcome["value"] = function()
        except RecursionError:
            outcome["value"] = None
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome["error"] = exc
        finally:
            sys.setrecursionlimit(limit)

    try:
        size = threading.stack_size(DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="poslint-deep-analysis", daemon=True)
            thread.start()
        finally:
            threading.stack_size(size)
    except (RuntimeError, ValueError, MemoryError):  # no thread, or no stack of that size here
        return None
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
