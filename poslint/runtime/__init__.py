"""Runtime verification with torch: run a module in 16-bit scenarios against its float64 self.

Importing this package imports torch. Lint mode never imports it.
"""

from poslint.runtime.loader import DEFAULT_FACTORY, VerifyError, load_factory
from poslint.runtime.verify import (
    DEFAULT_SEQ_LEN,
    EXTRA_SCENARIOS,
    SCENARIOS,
    ScenarioResult,
    Thresholds,
    VerifyResult,
    verify,
    verify_alibi,
    verify_rotary,
)

__all__ = [
    "DEFAULT_FACTORY",
    "DEFAULT_SEQ_LEN",
    "EXTRA_SCENARIOS",
    "SCENARIOS",
    "ScenarioResult",
    "Thresholds",
    "VerifyError",
    "VerifyResult",
    "load_factory",
    "verify",
    "verify_alibi",
    "verify_rotary",
]
