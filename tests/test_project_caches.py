"""The project-wide analysis's caches change no finding (issue 16): the trees that the project
prefilter's index and the units share (``Project.parsed``), the units kept between files, and
the index's outlines read from the text instead of the tree. Every fixture project is linted in
one process, in two file orders, with the caches as shipped and with each of them off (nothing
shared, every unit dropped before each file, every module indexed from its tree), and the
findings must be the same."""

from __future__ import annotations

from pathlib import Path

import pytest

import poslint.analysis.project as project_module
import poslint.engine.imports as imports
from poslint.engine.checker import check_text
from poslint.engine.imports import ProjectFiles
from poslint.engine.prefilter import may_have_findings
from poslint.rules import all_rules

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
CODES = frozenset(all_rules())


def _lint_all(order):
    imports._INDEXES.clear()
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
@pytest.mark.parametrize("off", [(), ("MAX_PARSED_SOURCE",), ("MAX_KEPT_SOURCE",),
                                 ("MAX_PARSED_SOURCE", "MAX_KEPT_SOURCE"), ("outline",)])
def test_the_project_caches_change_no_finding(shipped, monkeypatch, order, off):
    for name in off:
        if name == "outline":
            monkeypatch.setattr(imports, "outline", lambda text: None)
        else:
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


def _index_answers(root, outlines):
    """What the project prefilter says of each name each module of a fixture project imports."""
    imports._INDEXES.clear()
    files = ProjectFiles([str(root), str(root / "src")], str(root))
    answers = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        files.for_host(str(path))
        answers.append((str(path), files.imports_may_matter(text)))
        definitions = imports._Definitions(files, set(imports._IDENTIFIER.findall(text)))
        module, is_package = files.host
        package = project_module.package_of(module, is_package) if module else None
        for imported, names in imports._imports_in(text, package):
            for name in names or [""]:
                answers.append((imported, name, repr(definitions._definition(imported, name))))
    index_kinds = {index.from_text for index in imports._INDEXES.values()}
    assert index_kinds == ({True} if outlines else {False})
    return answers


@pytest.mark.parametrize("root", sorted(p for p in PROJECTS.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_the_index_from_outlines_is_the_index_from_trees(root, monkeypatch):
    from_text = _index_answers(root, True)
    monkeypatch.setattr(imports, "outline", lambda text: None)
    assert _index_answers(root, False) == from_text


def test_a_name_of_a_package_that_does_not_parse_is_its_submodule(tmp_path):
    """A module that does not parse defines nothing (its tree is empty): a name it seems to bind
    is looked for as a submodule, as when its tree is read."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("rope = (]\n")  # outlined, but does not parse
    (tmp_path / "pkg" / "rope.py").write_text("import torch\n\ninv_freq = 1.0 / 10000 ** torch.arange(0, 8, 2)\n")
    assert imports.outline("rope = (]\n") is not None and may_have_findings((tmp_path / "pkg" / "rope.py").read_text())
    files = ProjectFiles([str(tmp_path)], str(tmp_path))
    files.for_host(str(tmp_path / "user.py"))
    assert files.imports_may_matter("from pkg import rope\n")
    (tmp_path / "pkg" / "__init__.py").write_text("rope = 1\n")  # parses: the name is what it binds
    files = ProjectFiles([str(tmp_path)], str(tmp_path))
    files.for_host(str(tmp_path / "user.py"))
    assert not files.imports_may_matter("from pkg import rope\n")
