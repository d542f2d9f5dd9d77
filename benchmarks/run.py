#!/usr/bin/env python3
"""Benchmark poslint against ruff, flake8 and TorchFix on a real model zoo.

The corpus is the ``transformers/models`` package of a pinned transformers wheel. The script
downloads that wheel with ``pip download --no-deps transformers==<version>`` into a cache folder
(``--cache``, default ``$XDG_CACHE_HOME/poslint-bench`` or ``~/.cache/poslint-bench``) and
unpacks ``transformers/models`` there, once; later runs reuse it. ``--corpus DIR`` uses a tree
you already have instead.

It then runs, each ``--repeat`` times (the slow ones ``--repeat-slow`` times):

* ``poslint --no-cache`` (cold) with ``--jobs`` processes, and with one process;
* ``poslint`` with a cache that a first run filled (warm);
* ``ruff check --no-cache`` with ruff's default rules (the yardstick);
* ``flake8`` with its default checks (E, F, W, C90) and ``--jobs`` processes, if installed;
* TorchFix on a fixed subset (every 7th file of the sorted corpus), installed with pip into the
  running environment if it is missing (``--no-install`` skips that; it is skipped with a
  message when it cannot be had), and poslint on the same subset.

For each it prints the median wall time, the CPU time (user + system, the tool's processes
together), the peak memory of its largest process and of all its processes together, and the
ratio to ruff's cold wall time. It also reports how many files the prefilter sends to the
analysis and how many it skips, and checks that the findings are identical with and without
the speed-ups (the prefilter, the pool and the cache) unless ``--skip-reference`` is given.
``--scaling`` adds runs over a quarter, half and all of the corpus and over generated files of
1, 2 and 4 MB. ``--json FILE`` writes every measurement.

This is a script, not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

TRANSFORMERS = "4.57.1"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "poslint-bench"


# --- corpus ------------------------------------------------------------------------------------

def prepare_corpus(cache: Path, version: str) -> Path:
    target = cache / f"transformers-{version}"
    models = target / "transformers" / "models"
    if (target / ".complete").exists():
        return models
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    wheel = next(iter(sorted(wheels.glob(f"transformers-{version}-*.whl"))), None)
    if wheel is None:
        print(f"downloading transformers=={version} into {wheels} ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "-d", str(wheels), f"transformers=={version}"], check=True)
        wheel = next(iter(sorted(wheels.glob(f"transformers-{version}-*.whl"))))
    print(f"unpacking transformers/models from {wheel.name} into {target} ...", flush=True)
    if target.exists():
        shutil.rmtree(target)
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.namelist() if m.startswith("transformers/models/")]
        archive.extractall(target, members)
    (target / ".complete").write_text("ok\n")
    return models


def python_files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


# --- measuring ---------------------------------------------------------------------------------

class TreeRss:
    """Samples the resident memory of a process and its descendants (Linux /proc), for the peak
    of all of them together."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.available = os.path.isdir("/proc/self/task")
        if self.available:
            self._thread.start()

    def _children(self) -> Dict[int, List[int]]:
        tree: Dict[int, List[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                tree.setdefault(int(fields[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
        return tree

    def _rss(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            tree = self._children()
            pids, stack = [], [self.pid]
            while stack:
                pid = stack.pop()
                pids.append(pid)
                stack.extend(tree.get(pid, ()))
            self.peak = max(self.peak, sum(self._rss(p) for p in pids))
            self._stop.wait(0.05)

    def stop(self) -> Optional[int]:
        if not self.available:
            return None
        self._stop.set()
        self._thread.join()
        return self.peak


def measure(command: Sequence[str], cwd: Optional[Path] = None, stdout_path: Optional[Path] = None,
            timeout: Optional[float] = None, env=None) -> dict:
    """Run ``command``; return wall and CPU seconds, peak RSS (largest process, and all) and exit code."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    start = time.perf_counter()
    process = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env)
    sampler = TreeRss(process.pid)
    timed_out = False
    deadline = None if timeout is None else start + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline:
            process.kill()
            timed_out = True
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - start
    total = sampler.stop()
    if stdout_path:
        out.close()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "max_rss": usage.ru_maxrss * 1024,
            "tree_rss": total, "code": os.waitstatus_to_exitcode(status), "timed_out": timed_out}


def repeat(name: str, command: Sequence[str], times: int, results: dict, **kw) -> Optional[dict]:
    runs = []
    for i in range(times):
        run = measure(command, **kw)
        runs.append(run)
        print(f"  {name} run {i + 1}/{times}: {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU"
              + (" (timed out)" if run["timed_out"] else ""), flush=True)
    summary = {"command": list(command), "runs": runs,
               "wall": statistics.median(r["wall"] for r in runs), "cpu": statistics.median(r["cpu"] for r in runs),
               "max_rss": max(r["max_rss"] for r in runs),
               "tree_rss": max((r["tree_rss"] or 0) for r in runs) or None,
               "timed_out": any(r["timed_out"] for r in runs)}
    results[name] = summary
    return summary


def tool(name: str) -> Optional[List[str]]:
    here = Path(sys.executable).parent / name
    if here.exists():
        return [str(here)]
    found = shutil.which(name)
    return [found] if found else None


def poslint_command() -> List[str]:
    return [sys.executable, "-m", "poslint"]


# --- parts of the benchmark ----------------------------------------------------------------------

def prefilter_counts(files: Sequence[Path]) -> dict:
    sys.path.insert(0, str(REPO))
    from poslint.core.source import SourceText, UndecodableSource
    from poslint.engine.prefilter import may_have_findings

    analysed = skipped = analysed_bytes = skipped_bytes = 0
    start = time.process_time()
    for path in files:
        data = path.read_bytes()
        try:
            text = SourceText.from_bytes(data).text
        except UndecodableSource:
            analysed += 1
            continue
        if may_have_findings(text):
            analysed, analysed_bytes = analysed + 1, analysed_bytes + len(data)
        else:
            skipped, skipped_bytes = skipped + 1, skipped_bytes + len(data)
    return {"files": len(files), "analysed": analysed, "skipped": skipped, "analysed_bytes": analysed_bytes,
            "skipped_bytes": skipped_bytes, "prefilter_cpu": time.process_time() - start}


REFERENCE = r"""
import json, sys
import poslint.engine.checker as checker
from poslint.engine.linter import LintOptions, lint_file
from poslint.rules import all_rules
original = checker.check_text
checker.check_text = lambda text, path, codes, prefilter=True: original(text, path, codes, prefilter=False)
import poslint.engine.linter
poslint.engine.linter.check_text = checker.check_text
options = LintOptions(codes=frozenset(all_rules()))
out = []
for path in sys.argv[1:]:
    for d in lint_file(path, options).diagnostics:
        out.append([d.path, d.line, d.col, d.code, d.message])
json.dump(sorted(out), sys.stdout)
"""


def findings_of(json_output: Path) -> List[list]:
    data = json.loads(json_output.read_text(encoding="utf-8"))
    return sorted([d["filename"], d["location"]["row"], d["location"]["column"], d["code"], d["message"]]
                  for d in data)


def generated_file(path: Path, megabytes: float, positional: bool) -> None:
    plain = '''
def helper_{i}(x, scale=2.0, **kwargs):
    y = x * scale + {i}
    for k in range(3):
        y = y + k ** 2
    return y


TABLE_{i} = {{"a": {i}, "b": [1, 2, 3], "c": "text **bold** {i}"}}
'''
    rope = '''
def rope_{i}(x, dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    t = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype)
    return torch.outer(t, inv_freq).cos()
'''
    parts, size, i = ["import torch\n"], 0, 0
    while size < megabytes * 1e6:
        chunk = plain.format(i=i) + (rope.format(i=i) if positional and i % 10 == 0 else "")
        parts.append(chunk)
        size += len(chunk)
        i += 1
    path.write_text("".join(parts), encoding="utf-8")


def fmt_bytes(n: Optional[float]) -> str:
    return "-" if not n else f"{n / 2 ** 20:.0f} MB"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=default_cache(),
                        help="folder for the downloaded wheel and the unpacked corpus (default: %(default)s)")
    parser.add_argument("--corpus", type=Path, help="lint this tree instead of downloading transformers")
    parser.add_argument("--transformers", default=TRANSFORMERS, help="pinned transformers version (%(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each fast command (median is reported)")
    parser.add_argument("--repeat-slow", type=int, default=1, help="runs of flake8, TorchFix and the reference")
    parser.add_argument("--jobs", type=int, default=0, help="processes for poslint and flake8 (0: one per core)")
    parser.add_argument("--skip-reference", action="store_true",
                        help="do not compare with poslint without its speed-ups (one slow run)")
    parser.add_argument("--skip-flake8", action="store_true")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--no-install", action="store_true", help="do not pip-install TorchFix when it is missing")
    parser.add_argument("--scaling", action="store_true", help="also time parts of the corpus and generated files")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument("--json", type=Path, help="write all measurements to this file")
    args = parser.parse_args(argv)

    corpus = args.corpus.resolve() if args.corpus else prepare_corpus(args.cache, args.transformers)
    files = python_files(corpus)
    if args.jobs:
        jobs = args.jobs
    elif hasattr(os, "sched_getaffinity"):
        jobs = len(os.sched_getaffinity(0))
    else:
        jobs = os.cpu_count() or 1
    size = sum(p.stat().st_size for p in files)
    print(f"corpus: {corpus} ({len(files)} files, {size / 2 ** 20:.1f} MB); {jobs} jobs; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    results: dict = {"corpus": str(corpus), "files": len(files), "bytes": size, "jobs": jobs,
                     "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                 "python": platform.python_version()},
                     "date": time.strftime("%Y-%m-%d"), "runs": {}}
    runs = results["runs"]
    work = Path(tempfile.mkdtemp(prefix="poslint-bench-"))
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        results["prefilter"] = prefilter_counts(files)
        counts = results["prefilter"]
        print(f"prefilter: {counts['analysed']} files analysed ({counts['analysed_bytes'] / 2 ** 20:.1f} MB), "
              f"{counts['skipped']} skipped ({counts['skipped_bytes'] / 2 ** 20:.1f} MB), "
              f"{counts['prefilter_cpu']:.2f} s CPU to read and scan all", flush=True)

        posl = poslint_command()
        ruff = tool("ruff")
        if ruff:
            repeat("ruff check --no-cache", [*ruff, "check", "--no-cache", "--exit-zero", "-q", str(corpus)],
                   args.repeat, runs, timeout=args.timeout)
        else:
            print("ruff is not installed: no ratio to ruff (pip install ruff)")
        cold_out = work / "cold.json"
        repeat(f"poslint cold (-j {jobs})", [*posl, "check", "--no-cache", "--exit-zero", "--output-format", "json",
                                              "-j", str(jobs), str(corpus)], args.repeat, runs,
               stdout_path=cold_out, timeout=args.timeout, env=env)
        repeat("poslint cold (-j 1)", [*posl, "check", "--no-cache", "--exit-zero", "-q", "-j", "1", str(corpus)],
               args.repeat_slow, runs, timeout=args.timeout, env=env)
        cache_dir = work / "cache"
        subprocess.run([*posl, "check", "--exit-zero", "-q", "--cache-dir", str(cache_dir), str(corpus)],
                       stdout=subprocess.DEVNULL, env=env, check=False)
        warm_out = work / "warm.json"
        repeat("poslint warm", [*posl, "check", "--exit-zero", "--output-format", "json", "--cache-dir",
                                str(cache_dir), str(corpus)], args.repeat, runs, stdout_path=warm_out,
               timeout=args.timeout, env=env)

        identical = {"cold == warm": findings_of(cold_out) == findings_of(warm_out)}
        results["findings"] = len(findings_of(cold_out))
        if not args.skip_reference:
            ref_out = work / "reference.json"
            print("reference: poslint without prefilter, pool or cache ...", flush=True)
            repeat("poslint without speed-ups (-j 1)", [sys.executable, "-c", REFERENCE, *map(str, files)],
                   args.repeat_slow, runs, stdout_path=ref_out, timeout=args.timeout * 4, env=env)
            reference = sorted(json.loads(ref_out.read_text(encoding="utf-8")))
            fast = [[f, row, code, message] for f, row, _, code, message in findings_of(cold_out)]
            identical["cold == no speed-ups"] = sorted(fast) == sorted([p, r, c, m] for p, r, _, c, m in reference)
        results["identical"] = identical

        flake8 = tool("flake8")
        if flake8 and not args.skip_flake8:
            repeat("flake8 (E,F,W,C90)", [*flake8, "--select", "E,F,W,C90", "--exit-zero", "-j", str(jobs),
                                          str(corpus)], args.repeat_slow, runs, timeout=args.timeout)
        elif not args.skip_flake8:
            print("flake8 is not installed: skipped")

        subset = files[::7]
        if not args.skip_torchfix:
            torchfix = tool("torchfix")
            if torchfix is None and not args.no_install:
                print("installing torchfix with pip ...", flush=True)
                subprocess.run([sys.executable, "-m", "pip", "install", "-q", "torchfix"], check=False)
                torchfix = tool("torchfix")
            if torchfix is None:
                print("TorchFix is not available: skipped")
            else:
                repeat(f"TorchFix ({len(subset)} files)", [*torchfix, *map(str, subset)], args.repeat_slow, runs,
                       timeout=args.timeout)
        repeat(f"poslint cold ({len(subset)} files)", [*posl, "check", "--no-cache", "--exit-zero", "-q",
                                                      "-j", str(jobs), *map(str, subset)],
               args.repeat, runs, timeout=args.timeout, env=env)

        if args.scaling:
            for fraction in (4, 2, 1):
                part = files[: len(files) // fraction]
                repeat(f"poslint cold -j 1, 1/{fraction} of the files", [*posl, "check", "--no-cache", "--exit-zero",
                                                                         "-q", "-j", "1", *map(str, part)],
                       1, runs, timeout=args.timeout, env=env)
            for megabytes in (1, 2, 4):
                for positional in (False, True):
                    big = work / f"generated_{megabytes}mb_{'rope' if positional else 'plain'}.py"
                    generated_file(big, megabytes, positional)
                    repeat(f"poslint, generated {megabytes} MB ({'with' if positional else 'no'} RoPE)",
                           [*posl, "check", "--no-cache", "--exit-zero", "-q", str(big)], 1, runs,
                           timeout=args.timeout, env=env)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base = runs.get("ruff check --no-cache", {}).get("wall")
    print()
    print(f"{'command':<48} {'wall':>8} {'CPU':>8} {'max RSS':>9} {'all RSS':>9} {'x ruff':>7}")
    for name, summary in runs.items():
        ratio = f"{summary['wall'] / base:.2f}" if base else "-"
        flag = " (timed out)" if summary["timed_out"] else ""
        print(f"{name:<48} {summary['wall']:>7.2f}s {summary['cpu']:>7.2f}s {fmt_bytes(summary['max_rss']):>9} "
              f"{fmt_bytes(summary['tree_rss']):>9} {ratio:>7}{flag}")
    print(f"findings: {results['findings']}; identical: {results['identical']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(results["identical"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
