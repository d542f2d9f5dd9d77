"""Discovery's compiled globs and remembered relative paths decide exactly as the plain versions
they replaced: each glob matched with :func:`fnmatch.fnmatchcase` against the path and every
directory above it, and each path made relative with ``os.path.relpath``."""

import fnmatch
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from poslint.engine.files import DEFAULT_EXCLUDES, discover, glob_matches, relative_to_root


def plain_glob_matches(pattern: str, relpath: str) -> bool:
    pattern = pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    anchored = "/" in pattern
    for i in range(len(parts), 0, -1):
        candidate = "/".join(parts[:i]) if anchored else parts[i - 1]
        if fnmatch.fnmatchcase(candidate, pattern.lstrip("/")):
            return True
    return False


def plain_relative_to_root(path: str, root) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, os.path.abspath(root))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return Path(absolute).as_posix()
    return Path(rel).as_posix()


NAMES = st.sampled_from(["a", "b", "ab", "build", "x.py", "a_pb2.py", ".", "", "[", "a[b", "*"])
GLOB_PARTS = st.sampled_from(["a", "b", "*", "?", "a*", "*b", "[ab]", "[!a]", "build", "*.py", "*_pb2.py",
                              "**", "[", "x.py", "", "."])


@settings(max_examples=1000, deadline=None)
@given(st.lists(GLOB_PARTS, min_size=1, max_size=4), st.booleans(), st.booleans(), st.booleans(),
       st.lists(NAMES, max_size=5), st.booleans())
def test_glob_matches_as_fnmatch_at_every_level(glob_parts, leading_slash, leading_dot, trailing_slash,
                                                path_parts, absolute):
    pattern = ("/" if leading_slash else "") + ("./" if leading_dot else "") + "/".join(glob_parts) \
        + ("/" if trailing_slash else "")
    relpath = ("/" if absolute else "") + "/".join(path_parts)
    assert glob_matches(pattern, relpath) == plain_glob_matches(pattern, relpath), (pattern, relpath)


def test_default_excludes_on_typical_paths():
    paths = ["build/x.py", "src/build/lib/x.py", "src/builder.py", "a/.venv/b.py", "x/__pycache__",
             "models/bert/modeling_bert.py", "/abs/site-packages/m.py", "./dist", "."]
    for pattern in (*DEFAULT_EXCLUDES, "src/*", "/src", "models/*/modeling_*.py", "*.py", "a/", "./a"):
        for path in paths:
            assert glob_matches(pattern, path) == plain_glob_matches(pattern, path), (pattern, path)


def test_relative_to_root_follows_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    cases = [("a/b/x.py", tmp_path), ("x.py", tmp_path / "a"), ("../x.py", "a"), (str(tmp_path / "a"), "."),
             (".", tmp_path), ("a", tmp_path / "a" / "b")]
    for cwd in (tmp_path, tmp_path / "a", tmp_path / "a" / "b"):
        monkeypatch.chdir(cwd)
        for path, root in cases:
            assert relative_to_root(path, root) == plain_relative_to_root(path, root), (cwd, path, root)


def test_discovery_of_the_fixture_trees_is_unchanged():
    """The file list of each test tree with the compiled globs equals the one the plain globs give."""
    root = Path(__file__).parent
    counts = []
    for tree in ("fixtures", "corpus", "realworld"):
        for excludes in (DEFAULT_EXCLUDES, ("*_test*", "realworld/*", "fixtures/p*")):
            fast = discover([str(root / tree)], excludes, root, False)
            plain = discover([str(root / tree)], (), root, False, exclusion=lambda path, named: any(
                plain_glob_matches(g, plain_relative_to_root(path, root)) for g in excludes))
            assert fast.files == plain.files, (tree, excludes)
            assert fast.notes == plain.notes and fast.errors == plain.errors
            counts.append(len(fast.files))
    assert min(counts) == 0 < max(counts) and len(set(counts)) > 2  # some excluded, some not
