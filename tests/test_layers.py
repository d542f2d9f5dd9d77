"""The package is layered, and imports go down only: each module imports poslint modules of its
own layer or of a lower one, never of a higher one (lazy imports inside functions included)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "poslint"
# Lowest first. runtime stands beside analysis: it uses torch, not the linter.
LAYERS = ["core", "analysis", "runtime", "fix", "rules", "engine", "integrations", "edge"]
RANK = {"core": 0, "analysis": 1, "runtime": 1, "fix": 2, "rules": 3, "engine": 4, "integrations": 5, "edge": 6}


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__", "__main__"):
        return RANK["core"] if len(parts) == 1 or parts[1] == "__init__" else len(LAYERS)
    return RANK[parts[1]]


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_every_folder_is_a_known_layer():
    folders = {p.parent.name for p in MODULES if p.parent != PACKAGE}
    assert folders == set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_only(path):
    own = "poslint." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    upward = [f"line {line}: {module}" for line, module in _imports(path)
              if module.startswith("poslint.") and _layer(module) > _layer(own)]
    assert not upward, f"{own} imports a higher layer: {upward}"
