"""Rule registry. Every module named ``pos*.py`` in this package is imported, and its
:class:`~poslint.rules.base.Rule` subclasses register themselves; there is no hand-kept list."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Type

from poslint.rules.base import REGISTRY, Finding, Rule

__all__ = ["Finding", "Rule", "all_rules", "get_rule"]

_loaded = False


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("pos"):
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


def all_rules() -> Dict[str, Type[Rule]]:
    _load()
    return dict(sorted(REGISTRY.items()))


def get_rule(code: str) -> Type[Rule]:
    return all_rules()[code]
