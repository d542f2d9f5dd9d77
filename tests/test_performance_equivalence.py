"""The speed-ups change no result: the prefilter, the process pool and the cache give exactly what
checking every file in one process gives, over the fixture tree and a tree of real-world-style
files (tests/corpus), plus poslint's own sources and tests as code with nothing positional."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import poslint.engine.parallel
from poslint.core.source import SourceText, UndecodableSource
from poslint.edge.cli import main
from poslint.engine.checker import check_text
from poslint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
ALL = frozenset(all_rules())
TREES = ("tests/fixtures", "tests/corpus", "tests/runtime_models", "examples", "poslint", "tests")


def _files():
    seen = set()
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if path not in seen:
                seen.add(path)
                yield path


def _full(diagnostics):
    return [(d.line, d.col, d.end_line, d.end_col, d.code, d.message, d.fix) for d in diagnostics]


@pytest.mark.parametrize("path", list(_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_prefilter_changes_no_finding(path):
    try:
        text = SourceText.from_bytes(path.read_bytes()).text
    except UndecodableSource:
        return
    fast = check_text(text, str(path), ALL)
    slow = check_text(text, str(path), ALL, prefilter=False)
    assert _full(fast.diagnostics) == _full(slow.diagnostics)
    assert fast.internal_errors == slow.internal_errors


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A copy of the fixture and corpus trees, linted from its root."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "tests" / "fixtures", root / "fixtures")
    shutil.copytree(ROOT / "tests" / "corpus", root / "corpus")
    shutil.copytree(ROOT / "poslint", root / "poslint_sources", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(root)
    monkeypatch.delenv("POSLINT_CACHE_DIR", raising=False)
    # Use the pool even for this small tree.
    monkeypatch.setattr(poslint.engine.parallel, "MIN_FILES_FOR_POOL", 2)
    monkeypatch.setattr(poslint.engine.parallel, "MIN_BYTES_FOR_POOL", 0)
    return root


def _run(*args):
    result = CliRunner().invoke(main, ["check", "--output-format", "json", *args, "."])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_pool_and_cache_change_no_result(tree):
    reference = _run("--no-cache", "-j", "1")
    assert reference[1], "the tree has findings"
    assert _run("--no-cache", "-j", "2") == reference
    assert _run("--no-cache", "-j", "3") == reference
    assert _run("-j", "2") == reference  # cold cache
    assert (tree / ".poslint_cache" / "CACHEDIR.TAG").exists()
    assert _run("-j", "2") == reference  # warm
    assert _run("-j", "1") == reference


def test_diff_and_fix_are_the_same_over_the_pool(tree):
    one = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", "--no-cache", "-j", "1", "."])
    two = CliRunner().invoke(main, ["check", "--diff", "--unsafe-fixes", "-j", "2", "."])
    assert one.exit_code == two.exit_code == 1
    assert one.stdout == two.stdout and one.stdout
    copy = tree.parent / "copy"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".poslint_cache"))
    fixed_here = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "-j", "2", "."])
    import os

    os.chdir(copy)
    fixed_there = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "--no-cache", "-j", "1", "."])
    assert fixed_here.exit_code == fixed_there.exit_code
    assert fixed_here.stdout == fixed_there.stdout
    for path in sorted(tree.rglob("*.py")):
        assert path.read_bytes() == (copy / path.relative_to(tree)).read_bytes(), path
    os.chdir(tree)
    assert _run("-j", "2") == _run("--no-cache", "-j", "1")  # after fixing, the cache is right too


def test_chunks_cover_every_file_once():
    sizes = {i: (i * 7919) % 5000 + 1 for i in range(200)}
    order = sorted(sizes, key=lambda i: -sizes[i])
    chunks = poslint.engine.parallel._chunks(order, sizes, 4)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(200))
    assert len(chunks) >= 8


# --- project-wide analysis -------------------------------------------------------------------

PROJECT_TREES = ("tests/fixtures/projects", "tests/corpus", "examples")


def _project_files():
    for tree in PROJECT_TREES:
        yield from sorted((ROOT / tree).rglob("*.py"))


def test_project_analysis_is_the_same_however_files_share_a_process():
    """Imported modules are analysed once per process and calls into them are summarised for
    every file: one process for all files, files in reverse order, and a fresh process state
    (a new ProjectFiles) per file all give the same findings, with and without the prefilter."""
    from poslint.engine.imports import ProjectFiles

    paths = list(_project_files())
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in paths}

    def lint(order, shared: bool, prefilter: bool):
        files = ProjectFiles([str(ROOT)], str(ROOT))
        out = {}
        for path in order:
            project = files if shared else ProjectFiles([str(ROOT)], str(ROOT))
            checked = check_text(texts[path], str(path), ALL, project=project, prefilter=prefilter)
            out[path] = (_full(checked.diagnostics), checked.internal_errors)
        return out

    reference = lint(paths, shared=False, prefilter=False)
    assert any(found for found, _ in reference.values())
    assert lint(paths, shared=True, prefilter=True) == reference
    assert lint(list(reversed(paths)), shared=True, prefilter=True) == reference
