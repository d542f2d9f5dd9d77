"""Name resolution: what an imported name or attribute chain refers to.

``import torch as T`` makes ``T.arange`` resolve to ``torch.arange``; ``from torch import
bfloat16`` makes ``bfloat16`` resolve to ``torch.bfloat16``. Every rule sees qualified names
through this one resolver.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Optional

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


class ImportResolver:
    def __init__(self, tree: ast.Module, imports: Optional[Iterable[ast.AST]] = None):
        """Resolve the imports of ``tree``; ``imports``, when given, are its import statements
        already collected by a walk the caller makes anyway."""
        self.aliases: Dict[str, str] = {}
        for node in ast.walk(tree) if imports is None else imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualname(self, expr: ast.AST) -> Optional[str]:
        """The canonical dotted name ``expr`` refers to, if it starts at an import."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id not in self.aliases:
            return None
        name = ".".join([self.aliases[expr.id], *reversed(parts)])
        return canonical(name)


def canonical(name: str) -> str:
    for prefix, target in CANONICAL.items():
        if name == prefix:
            return target
        if name.startswith(prefix + "."):
            return target + name[len(prefix):]
    return name
