"""Name resolution: what an imported name or attribute chain refers to.

``import torch as T`` makes ``T.arange`` resolve to ``torch.arange``; ``from torch import
bfloat16`` makes ``bfloat16`` resolve to ``torch.bfloat16``. Every rule sees qualified names
through this one resolver.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, List, Optional

# Aliases that torch itself defines, so that rules only ever see one spelling.
CANONICAL = {
    "torch.half": "torch.float16",
    "torch.float": "torch.float32",
    "torch.double": "torch.float64",
    "torch.cfloat": "torch.complex64",
    "torch.cdouble": "torch.complex128",
    "torch.long": "torch.int64",
    "torch.int": "torch.int32",
    "torch.short": "torch.int16",
    "torch.concat": "torch.cat",
    "torch.concatenate": "torch.cat",
    "torch.ger": "torch.outer",
    "torch.nn.functional": "torch.nn.functional",
    "torch.cuda.amp.autocast": "torch.autocast",
    "torch.cpu.amp.autocast": "torch.autocast",
    "torch.amp.autocast": "torch.autocast",
    "torch.amp.autocast_mode.autocast": "torch.autocast",
    "torch.cuda.amp.custom_fwd": "torch.amp.custom_fwd",
}


# Roots of names that are never the project's: torch's API is known from tables, not from its source.
NOT_FIRST_PARTY = frozenset({"torch", "math", "numpy", "np", "einops", "builtins"})


class ImportResolver:
    def __init__(self, tree: ast.Module, imports: Optional[Iterable[ast.AST]] = None, package: Optional[str] = None):
        """Resolve the imports of ``tree``; ``imports``, when given, are its import statements
        already collected by a walk the caller makes anyway. ``package`` is the dotted package the
        module is in, when the project's layout tells it: relative imports resolve against it."""
        self.aliases: Dict[str, str] = {}
        self.star_modules: List[str] = []  # ``from <module> import *``, in order
        for node in ast.walk(tree) if imports is None else imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom):
                module = absolute_module(node, package)
                if module is not None and any(alias.name == "*" for alias in node.names):
                    self.star_modules.append(module)
                for alias in node.names:
                    if module is not None and alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name

    def take_star_imports(self, aliases_of: Callable[[str], Dict[str, str]]) -> None:
        """Add what each star import brings in (``aliases_of(module)``: the project knows its own
        modules); a name the module imports itself keeps its own meaning."""
        for module in self.star_modules:
            for name, target in aliases_of(module).items():
                self.aliases.setdefault(name, target)

    def qualname(self, expr: ast.AST, aliased: bool = True) -> Optional[str]:
        """The canonical dotted name ``expr`` refers to, if it starts at an import (``aliased=False``:
        as spelled, where torch's aliases differ, as ``torch.cuda.amp.autocast``'s parameters do)."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id not in self.aliases:
            return None
        name = ".".join([self.aliases[expr.id], *reversed(parts)])
        return canonical(name) if aliased else name


def absolute_module(node: ast.ImportFrom, package: Optional[str]) -> Optional[str]:
    """The module ``from <node.module> import ...`` reads, as an absolute dotted name; for a
    relative import, resolved against ``package`` (None when it is not known or goes above it)."""
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) or (node.level - 1 == len(parts) and not node.module):
        return None
    base = parts[:len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def canonical(name: str) -> str:
    if not name.startswith("torch."):  # every alias is torch's
        return name
    parts = name.split(".")
    for end in range(2, len(parts) + 1):  # no alias is a dotted prefix of another: one matches at most
        prefix = ".".join(parts[:end])
        if prefix in CANONICAL:
            return CANONICAL[prefix] + name[len(prefix):]
    return name


def is_test_module(name: str) -> bool:
    """Whether the dotted module ``name`` is a test by pytest's conventions: in a ``tests`` or
    ``test`` package, or a ``test_*.py``, ``*_test.py`` or ``conftest.py`` file."""
    *packages, last = name.split(".")
    return any(part in ("test", "tests") for part in packages) or last in ("test", "tests", "conftest") or \
        last.startswith("test_") or last.endswith("_test")
