"""A module of the project that the analysis drops is freed by reference counting (issue 16):
nothing it made points back at it strongly, so no cycle keeps it until the garbage collector's
next full pass (with the engine's tuning, a rare one)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import poslint.analysis.project as project_module
from poslint.engine.checker import check_text
from poslint.engine.imports import ProjectFiles
from poslint.rules import all_rules

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
CODES = frozenset(all_rules())


def test_a_dropped_unit_is_freed_by_reference_counting(monkeypatch):
    root = PROJECTS / "split_rotary"
    files = ProjectFiles([str(root)], str(root))
    gc.collect()
    gc.disable()
    try:
        for path in sorted(root.rglob("*.py")):
            check_text(path.read_text(encoding="utf-8"), str(path), CODES, project=files)
        units = [unit for unit in files.project._units.values() if unit is not None]
        assert any(unit.interpreter.classes for unit in units)  # the hosts called into them
        made = [weakref.ref(unit.interpreter) for unit in units]
        made += [weakref.ref(cls) for unit in units for cls in unit.interpreter.classes.values()]
        del units
        monkeypatch.setattr(project_module, "MAX_KEPT_SOURCE", 0)
        files.project.begin(None, None)
        assert [ref() for ref in made if ref() is not None] == []
    finally:
        gc.enable()
