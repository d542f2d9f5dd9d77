"""The process pool and the cache under bad conditions (issue 9): an exception or a dead worker
on one file, and a cache that is corrupt or cannot be written, must not take down the run or
hide the findings of the other files."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
PADDING = ("# padding, so that the run is big enough for the process pool " + "." * 40 + "\n") * 400
FILES = 12

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the test rule reaches the workers by fork, as poslint's pool starts them on Linux")


def _tree(root: Path, marker: str) -> None:
    for i in range(FILES):
        (root / f"m{i:02d}.py").write_text(MODEL + (f"# {marker}\n" if i == 5 else "") + PADDING)


def _run(root: Path, failure: str, *args: str) -> subprocess.CompletedProcess:
    """poslint --jobs 2 on ``root`` with a test rule that fails in the way ``failure`` says on the
    file marked FAIL."""
    script = textwrap.dedent(f'''\
        import os, signal, sys
        from poslint.rules.base import Rule

        class Fails(Rule):
            """Test rule."""
            code = "POS992"
            name = "test-fails"
            summary = "Test rule that fails on one file"

            def check(self, facts):
                if "FAIL" in facts.text:
                    if {failure!r} == "exception":
                        raise KeyError("boom")
                    os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
                return iter(())

        from poslint.edge.cli import main
        sys.argv = ["poslint", "--jobs", "2", *{list(args)!r}, "."]
        main()
        ''')
    return subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "POSLINT_CACHE_DIR": str(root / ".cache")})


def test_an_exception_in_a_worker_is_that_files_internal_error(tmp_path):
    _tree(tmp_path, "FAIL")
    proc = _run(tmp_path, "exception", "--no-cache")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stdout.count(": POS101 ") == FILES and proc.stdout.count(": POS102 ") == FILES
    assert "poslint: internal error: m05.py: POS992 raised KeyError: 'boom'" in proc.stderr
    assert proc.stderr.count("internal error") == 1


def test_a_worker_that_dies_on_one_file_loses_only_that_file(tmp_path):
    _tree(tmp_path, "FAIL")
    proc = _run(tmp_path, "kill", "--no-cache")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stdout.count(": POS101 ") == FILES - 1, proc.stderr
    assert "m05.py: a worker process died" in proc.stderr


def test_a_corrupt_or_unwritable_cache_changes_nothing(tmp_path):
    _tree(tmp_path, "no failure here")
    first = _run(tmp_path, "exception")
    assert first.returncode == 1 and first.stdout.count(": POS101 ") == FILES
    cache_files = list((tmp_path / ".cache").glob("*.json"))
    assert cache_files
    for damage in (b"\xa3\x00 not json", b'{"format": 1, "index": {"x": [1, 2]}, "entries": {"a:b": [[1]]}}', b""):
        for path in cache_files:
            path.write_bytes(damage)
        again = _run(tmp_path, "exception")
        assert (again.returncode, again.stdout) == (first.returncode, first.stdout), again.stderr
        assert "Traceback" not in again.stderr
    for path in (tmp_path / ".cache").iterdir():
        path.unlink()
    (tmp_path / ".cache").rmdir()
    (tmp_path / ".cache").write_text("a file where the cache directory should be")
    blocked = _run(tmp_path, "exception")
    assert (blocked.returncode, blocked.stdout) == (first.returncode, first.stdout), blocked.stderr
    assert "poslint: warning: " in blocked.stderr and "Traceback" not in blocked.stderr


def _idle_worker(ready, work):
    from poslint.engine.linter import LintOptions
    from poslint.engine.parallel import _init_worker

    _init_worker(LintOptions(codes=frozenset()), False, None)
    ready.set()
    work.get()  # as a pool's worker waits for its next task


def test_an_idle_worker_exits_on_sigterm():
    # A pool that broke because a worker was killed terminates the others and waits for them:
    # one that only finished its file on SIGTERM and then waited for more work hung the run.
    import multiprocessing
    import signal

    context = multiprocessing.get_context("fork")
    ready, work = context.Event(), context.Queue()
    process = context.Process(target=_idle_worker, args=(ready, work))
    process.start()
    try:
        assert ready.wait(60)
        os.kill(process.pid, signal.SIGTERM)
        process.join(timeout=30)
        assert process.exitcode == 128 + signal.SIGTERM
    finally:
        if process.is_alive():
            process.kill()
            process.join()
