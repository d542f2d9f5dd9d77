"""The project-wide analysis's caches change no finding (issue 16): the trees that the project
prefilter's index and the units share (``Project.parsed``), the units kept between files, and the
collection run after dropping them. Every fixture project is linted in one process, in two file
orders, with the caches as shipped and with each of them off (nothing shared, every unit dropped
and collected before each file), and the findings must be the same."""

from __future__ import annotations

from pathlib import Path

import pytest

import poslint.analysis.project as project_module
from poslint.engine.checker import check_text
from poslint.engine.imports import ProjectFiles
from poslint.rules import all_rules

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
CODES = frozenset(all_rules())


def _lint_all(order):
    found = []
    for root in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        files = ProjectFiles([str(root), str(root / "src")], str(root))
        paths = sorted(root.rglob("*.py"))
        for path in (paths if order == "forward" else paths[::-1]):
            result = check_text(path.read_text(encoding="utf-8"), str(path), CODES, project=files)
            found += [(str(path.relative_to(PROJECTS)), d.line, d.col, d.code, d.message)
                      for d in result.diagnostics]
            assert not result.internal_errors
    return sorted(found)


@pytest.fixture(scope="module")
def shipped():
    return _lint_all("forward")


@pytest.mark.parametrize("order", ["forward", "reverse"])
@pytest.mark.parametrize("off", [(), ("MAX_PARSED_SOURCE",), ("MAX_KEPT_SOURCE", "MAX_DROPPED_SOURCE"),
                                 ("MAX_PARSED_SOURCE", "MAX_KEPT_SOURCE", "MAX_DROPPED_SOURCE")])
def test_the_project_caches_change_no_finding(shipped, monkeypatch, order, off):
    for name in off:
        monkeypatch.setattr(project_module, name, 0)
    assert shipped  # the fixtures have cross-file findings: the comparison means something
    assert _lint_all(order) == shipped


def test_a_parsed_tree_is_shared_by_the_index_and_the_unit(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\n\ndef positions(n):\n    return torch.arange(n)\n")
    files = ProjectFiles([str(tmp_path)], str(tmp_path))
    files.for_host(str(tmp_path / "pkg" / "model.py"))
    path, text, _ = files.find("pkg.helpers")
    first = files.project.parsed(path, text)
    assert files.project.unit("pkg.helpers").facts.tree is first
    assert files.project.parsed(path, text + "\n") is not first  # another text, another tree
