"""The rule protocol. A rule registers itself by subclassing :class:`Rule` with a ``code``."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Dict, Iterator, Literal, Optional, Sequence, Type

from poslint.core.diagnostics import Fix

if TYPE_CHECKING:
    from poslint.analysis import ModuleFacts

FixAvailability = Literal["none", "sometimes", "always"]

REGISTRY: Dict[str, Type["Rule"]] = {}


@dataclass(frozen=True)
class Finding:
    """What a rule reports: the node whose span is highlighted, the message, an optional fix."""

    node: ast.AST
    message: str
    fix: Optional[Fix] = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]  # one line
    fix_availability: ClassVar[FixAvailability] = "none"
    # Fixit-style inline examples; tests assert VALID is silent and INVALID fires this rule.
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[str]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        if code in REGISTRY:
            raise RuntimeError(f"duplicate rule code {code}: {REGISTRY[code].__module__} and {cls.__module__}")
        REGISTRY[code] = cls

    def check(self, facts: "ModuleFacts") -> Iterator[Finding]:
        return iter(())

    @classmethod
    def documentation(cls) -> str:
        """The rule page in Markdown, built from the class attributes and the ruff-style docstring."""
        fix = {"none": "Fix is not available.", "sometimes": "Fix is sometimes available.",
               "always": "Fix is always available."}[cls.fix_availability]
        body = inspect.cleandoc(cls.__doc__ or "")
        return f"# {cls.name} ({cls.code})\n\n{cls.summary}\n\n{fix}\n\n{body}\n"
