"""The dtype-flow analysis that every rule uses: one pass per file, facts out.

* ``lattice``: the values (where a dtype comes from, what a value is for) and how paths merge;
* ``torch_api``: what poslint knows about torch, as tables;
* ``object_model``: a module's functions and classes, how it holds tensors, and phases;
* ``roles``: how operations change roles, and the sinks that decide them;
* ``interpreter``: the evaluation of statements and expressions;
* ``names``: import resolution; ``facts``: what the rules query;
* ``project``: the other modules of the project, followed through imports.
"""

from __future__ import annotations

import ast
from typing import Optional

from poslint.analysis.facts import CUDA_AUTOCAST_LOWERED, Cast, Creation, ModuleFacts, Product, Site, Store, node_key
from poslint.analysis.interpreter import Interpreter
from poslint.analysis.lattice import LOW_PRECISIONS, Origin, Prec, Role, Sort, Value
from poslint.analysis.names import ImportResolver
from poslint.analysis.object_model import resolving_foreign_bases
from poslint.analysis.project import ModuleSource, Project, package_of
from poslint.analysis.subtrees import index_module
from poslint.core.source import LineIndex

__all__ = [
    "CUDA_AUTOCAST_LOWERED", "Cast", "Creation", "LOW_PRECISIONS", "ModuleFacts", "Origin", "Prec",
    "ModuleSource", "Product", "Project", "Role", "Site", "Sort", "Store", "Value", "analyze", "node_key",
]


def analyze(tree: ast.Module, text: str, index: LineIndex, project: Optional[Project] = None,
            module: Optional[str] = None, is_package: bool = False) -> ModuleFacts:
    """The facts of one module. With ``project``, calls and base classes imported from the
    project's other modules are followed (``module`` is this one's dotted name, when known, for
    relative imports)."""
    found = index_module(tree)  # one walk for what the resolver, the interpreter and the object model need
    package = package_of(module, is_package) if module is not None else None
    facts = ModuleFacts(tree=tree, text=text, index=index, names=ImportResolver(tree, found.imports, package),
                        module=module)
    with resolving_foreign_bases(project.foreign_bases() if project is not None else None):
        Interpreter(facts, found.class_names, project=project, follows_imports=True).run()
    return facts
