"""poslint reads code; it never runs it (issue 9).

* Lint mode, ``--fix`` included, never imports, compiles for execution, or runs the code it
  reads, and never imports torch.
* The configuration is parsed as data (TOML), never evaluated.
* ``poslint verify`` is the only command that imports user code, and its help says so.
* Symbolic links out of the linted tree are a deliberate, documented choice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from poslint.edge.cli import main

ROOT = Path(__file__).parent.parent
MODEL = '''import torch
from torch import nn


class Rotary(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, seq_len):
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)
'''


def poslint_command():
    """The installed ``poslint`` script: unlike ``python -m`` or ``python -c``, it does not put
    the current directory first on ``sys.path`` (see README, "Safety")."""
    script = Path(sys.executable).parent / ("poslint.exe" if os.name == "nt" else "poslint")
    if not script.exists():
        pytest.skip("the poslint script is not installed next to this Python")
    return [str(script)]


def booby_trap(sentinel: Path, label: str) -> str:
    """Python source that creates ``sentinel`` (with ``label`` in it) in every way that importing,
    running or evaluating any part of it could."""
    write = f"__import__('pathlib').Path({str(sentinel)!r}).write_text({label!r})"
    return textwrap.dedent(f'''\
        {write}
        import torch
        from torch import nn

        TRIGGER = {write}


        def default(value={write}):
            return value


        def annotated(x: {write}) -> {write}:
            return x


        def decorator(f):
            {write}
            return f


        class Meta(type):
            def __new__(mcs, *args):
                {write}
                return super().__new__(mcs, *args)


        @decorator
        class Rotary(nn.Module, metaclass=Meta):
            side_effect = {write}

            def __init__(self, dim, base=10000):
                super().__init__()
                inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
                self.register_buffer("inv_freq", inv_freq, persistent=False)

            def forward(self, x, seq_len):
                {write}
                t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
                freqs = torch.outer(t, self.inv_freq)
                return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)


        def poslint_factory(seq_len=8192):
            {write}


        exec({write!r})
        eval({write!r})
        if __name__ == "__main__":
            {write}
        ''')


def test_lint_and_fix_never_run_the_code_they_read(tmp_path):
    sentinel = tmp_path / "EXECUTED"
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    for name in ("model.py", "pkg/__init__.py", "pkg/__main__.py", "setup.py", "conftest.py", "sitecustomize.py",
                 "usercustomize.py"):
        (tree / name).write_text(booby_trap(sentinel, name))
    # Files named like modules poslint itself imports: a tree must not shadow them.
    for name in ("torch.py", "click.py", "libcst.py", "ast.py", "tokenize.py", "tomllib.py", "poslint.py",
                 "json.py", "typing_extensions.py", "numpy.py"):
        (tree / name).write_text(f"__import__('pathlib').Path({str(sentinel)!r}).write_text({name!r})\n")
    (tree / "script").write_text("#!/usr/bin/env python\n" + booby_trap(sentinel, "script"))
    (tree / "pyproject.toml").write_text("[tool.poslint]\nunsafe-fixes = true\n")
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": booby_trap(sentinel, "notebook").splitlines(keepends=True)}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tree / "notebook.ipynb").write_text(json.dumps(notebook))
    env = {**os.environ, "POSLINT_CACHE_DIR": str(tmp_path / "cache")}
    for args in (["."], ["script", "."], ["--fix", "."], ["--fix", "--diff", "."], ["--jobs", "2", "--fix", "."]):
        proc = subprocess.run(poslint_command() + args, cwd=tree, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert not sentinel.exists(), f"poslint {' '.join(args)} ran {sentinel.read_text()}"
    assert "dtype=torch.float32" in (tree / "model.py").read_text()  # --fix did run
    # and the trap is armed: running the file does create the sentinel
    subprocess.run([sys.executable, str(tree / "setup.py")], cwd=tmp_path, capture_output=True, timeout=120)
    assert sentinel.exists()


def test_lint_mode_compiles_nothing_for_execution_and_imports_neither_torch_nor_the_linted_code(tmp_path):
    """In a fresh interpreter, with exec, eval and every compile() that is not for an AST made to
    fail, lint and fix a tree; torch, poslint.runtime and the linted modules are never imported."""
    sentinel = tmp_path / "EXECUTED"
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "linted_module_xyzzy.py").write_text(booby_trap(sentinel, "module"))
    (tree / "plain.py").write_text(MODEL)
    probe = textwrap.dedent('''\
        import ast, builtins, sys
        from poslint.edge.cli import main

        def lint(args):
            try:
                main(["--no-cache", "-j", "1", *args], standalone_mode=False)
            except SystemExit:
                pass

        lint(["--diff", "--unsafe-fixes", "."])  # imports what linting and fixing need, writes nothing
        violations = []
        real = builtins.exec, builtins.eval, builtins.compile

        def no_exec(source, *args, **kwargs):
            violations.append(("exec/eval", str(source)[:80]))
            raise RuntimeError("exec/eval while linting")

        def ast_only(source, filename, mode, flags=0, *args, **kwargs):
            if not flags & ast.PyCF_ONLY_AST:
                violations.append(("compile", filename))
                raise RuntimeError("compile() for execution while linting")
            return real[2](source, filename, mode, flags, *args, **kwargs)

        builtins.exec, builtins.eval, builtins.compile = no_exec, no_exec, ast_only
        lint(["."])
        lint(["--fix", "--unsafe-fixes", "."])
        builtins.exec, builtins.eval, builtins.compile = real
        assert not violations, violations
        loaded = [m for m in ("torch", "poslint.runtime", "linted_module_xyzzy", "plain") if m in sys.modules]
        assert not loaded, loaded
        print("ok")
        ''')
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONSAFEPATH": "1"})
    assert proc.returncode == 0 and proc.stdout.endswith("ok\n"), proc.stdout + proc.stderr
    assert not sentinel.exists()
    assert "dtype=torch.float32" in (tree / "plain.py").read_text()


def test_configuration_is_data_never_code(tmp_path, monkeypatch):
    sentinel = tmp_path / "EXECUTED"
    payload = f"__import__('pathlib').Path({str(sentinel)!r}).write_text('config')"
    monkeypatch.chdir(tmp_path)
    Path("model.py").write_text(MODEL)
    for body in (f'select = ["{payload}"]', f'exclude = "{payload}"', f'per-file-ignores = {{ "{payload}" = ["ALL"] }}',
                 f'"{payload}" = 1', f'unsafe-fixes = "{payload}"'):
        Path("pyproject.toml").write_text(f"[tool.poslint]\n{body}\n")
        result = CliRunner().invoke(main, ["model.py"])
        assert result.exit_code in (1, 2) and "Traceback" not in result.output
        assert not sentinel.exists(), body
    # the loader is tomllib (tomli before 3.11): nothing in it evaluates Python
    import poslint.engine.config

    assert poslint.engine.config.tomllib.__name__ in ("tomllib", "tomli")
    source = Path(poslint.engine.config.__file__).read_text()
    assert not any(word in source for word in ("eval(", "exec(", "import_module(", "__import__("))


def test_only_verify_imports_user_code_and_its_help_says_so():
    runner = CliRunner()
    verify_help = runner.invoke(main, ["verify", "--help"]).output
    assert "IMPORTS AND RUNS" in verify_help
    check_help = " ".join(runner.invoke(main, ["check", "--help"]).output.split())
    assert "never imports or runs" in check_help
    docs = (ROOT / "docs" / "verify.md").read_text()
    assert "imports and runs" in docs.lower()
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`poslint verify` is the only command that imports" in readme


# --- symbolic links out of the tree ----------------------------------------------------------

@pytest.fixture
def linked(tmp_path, monkeypatch):
    """``project/`` with a link to a file outside it, a link to a file inside it, and a link to a
    directory outside it; ``outside/`` holds the targets."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "pkg").mkdir(parents=True)
    (outside / "vendored").mkdir(parents=True)
    (project / "pkg" / "model.py").write_text(MODEL)
    (outside / "shared.py").write_text(MODEL)
    (outside / "vendored" / "other.py").write_text(MODEL)
    os.symlink(outside / "shared.py", project / "shared_link.py")
    os.symlink("pkg/model.py", project / "inner_link.py")
    os.symlink(outside / "vendored", project / "vendored")
    monkeypatch.chdir(project)
    monkeypatch.setenv("POSLINT_CACHE_DIR", str(tmp_path / "cache"))
    return project, outside


def test_walking_never_follows_links_out_of_the_tree(linked):
    project, outside = linked
    result = CliRunner().invoke(main, ["--fix", "."])
    assert result.exit_code == 1, result.output  # POS102's fix is unsafe
    assert ("poslint: note: shared_link.py: skipped, symbolic link to a file outside " + str(project.resolve()) +
            " (name it on the command line to lint it)") in result.stderr
    assert "vendored" not in result.output  # a linked directory is never entered
    # a link whose target is inside the tree is linted, and the target once, by one of its names
    assert result.stdout.count("pkg/model.py:") + result.stdout.count("inner_link.py:") == 1
    assert (outside / "shared.py").read_text() == MODEL  # --fix never wrote outside the tree
    assert (outside / "vendored" / "other.py").read_text() == MODEL
    assert "dtype=torch.float32" in (project / "pkg" / "model.py").read_text()


def test_a_link_named_on_the_command_line_is_followed(linked):
    project, outside = linked
    result = CliRunner().invoke(main, ["--fix", "shared_link.py", "vendored"])
    assert result.exit_code == 1, result.output
    assert "shared_link.py:13:32: POS102" in result.stdout
    assert "vendored/other.py:13:32: POS102" in result.stdout
    assert os.path.islink("shared_link.py")  # the link is kept and its target is written
    assert "dtype=torch.float32" in (outside / "shared.py").read_text()
    assert "dtype=torch.float32" in (outside / "vendored" / "other.py").read_text()


def test_the_symlink_choice_is_documented():
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "never leaves the tree it walks" in readme
    assert "a symbolic link named on the command line is followed" in readme.lower()
    import poslint.engine.files

    assert "deliberate choice" in poslint.engine.files.__doc__
