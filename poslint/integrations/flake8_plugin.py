"""poslint as a flake8 plugin: ``flake8 --select POS`` reports poslint's findings with its codes.

Registered as ``[project.entry-points."flake8.extension"] POS = "poslint.integrations.flake8_plugin:Plugin"``.
flake8 reads and decodes the file, parses it, and handles ``# noqa``, ``--select``/``--ignore``,
``per-file-ignores`` and its own configuration; poslint's ``[tool.poslint]`` table is not read in
this mode, and every rule runs. The plugin checks the lines flake8 hands it (the file is not read
again, and flake8's tree is reused rather than parsed a second time) and yields flake8's tuples: 1-based line, 0-based column (flake8 prints it 1-based, so
``path:line:col`` matches poslint's own output), ``"POS101 message"`` and the plugin class.

POS001 (cannot parse) is not reported here: flake8 reports a file it cannot parse as E999 and
does not run AST plugins on it.

Imports into the project's other modules are followed as ``poslint check`` follows them by
default (see :mod:`poslint.engine.imports`): the project is the directory above the file's top
package, and the current directory and its ``src`` (ruff's default ``src``), where flake8 runs.
"""

from __future__ import annotations

import ast
import os
from typing import Iterator, Sequence, Tuple, Type

from poslint import __version__


class Plugin:
    name = "poslint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str = "stdin"):
        self.tree = tree  # flake8 has parsed the file: only files that parse reach the plugin
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, Type["Plugin"]]]:
        from poslint.engine.checker import PARSE_ERROR, check_text
        from poslint.engine.imports import project_files
        from poslint.rules import all_rules

        codes = [code for code in all_rules() if code != PARSE_ERROR]
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        here = os.getcwd()
        project = project_files((here, os.path.join(here, "src")), here) if os.path.isfile(self.filename) else None
        result = check_text("".join(self.lines), self.filename, codes, tree=tree, project=project)
        for d in result.diagnostics:
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
        for message in result.internal_errors:
            # Not a finding, but it must not pass silently: flake8 shows it like one.
            yield 1, 0, f"POS000 poslint internal error: {message}", type(self)
