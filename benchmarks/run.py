#!/usr/bin/env python3
"""Benchmark poslint against ruff, flake8 and TorchFix on a real model zoo.

The corpus is the ``transformers/models`` package of a pinned transformers wheel. The script
downloads that wheel with ``pip download --no-deps transformers==<version>`` into a cache folder
(``--cache``, default ``$XDG_CACHE_HOME/poslint-bench`` or ``~/.cache/poslint-bench``) and
unpacks ``transformers/models`` there, once; later runs reuse it. ``--corpus DIR`` uses a tree
you already have instead, and then nothing is downloaded or installed. Either way the tree is
copied into a temporary folder first, so that no configuration, ``.gitignore`` or exclude above
it applies (a tree under ``build/`` would be excluded) and files can be changed for the
pre-commit run; every tool lints that copy.

It then runs, each ``--repeat`` times (the slow ones ``--repeat-slow`` times):

* ``ruff check --isolated --no-cache`` with ruff's default rules (the yardstick);
* ``poslint --no-cache`` (cold) with ``--jobs`` processes (default: one per core), and with one;
* ``poslint`` with a cache that a first run filled (warm);
* a pre-commit-style run: 10 files changed (a comment appended), named on the command line, the
  cache warm for the rest of the tree;
* ``poslint --no-cache -j N`` for N in 1, 2 and the number of cores (the scaling curve);
* ``flake8`` with its default checks (E, F, W, C90) and ``--jobs`` processes, if installed;
* TorchFix on a fixed subset (every 7th file of the sorted corpus), installed with pip into the
  running environment if it is missing and the corpus is downloaded (``--no-install`` skips
  that; it is skipped with a message when it cannot be had), and poslint on the same subset;
* ``--earlier DIR``: also ``poslint --no-cache`` cold from the checkout ``DIR`` (its ``poslint``
  package is imported instead of this one), to compare with an earlier version.

For each it prints the median wall time, the CPU time (user + system, the tool's processes
together), the peak memory of its largest process and of all its processes together, and the
ratio to ruff's wall time. It also reports how many files the prefilter's raw test and code test
each dismiss and what they, the syntax check of the dismissed files (POS001) and ``ast.parse`` of
the rest cost, with one ``ast.walk`` of those trees: together, the floor that no analysis in Python
on ``ast`` goes below, and its ratio to ruff at perfect scaling over the cores; checks that the findings are identical with and without the speed-ups (the
prefilter, the pool and the cache) unless ``--skip-reference`` is given; and, unless
``--skip-profile``, prints where a ``-j 1`` cold run spends its time (cProfile, by function and
by package). ``--scaling`` adds runs over a quarter, half and all of the corpus and over
generated files of 1, 2 and 4 MB. ``--json FILE`` writes every measurement.

This is a script, not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import ast
import json
import multiprocessing
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
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


def repeat(name: str, command: Sequence[str], times: int, results: dict, before=None, **kw) -> Optional[dict]:
    """Run ``command`` ``times`` times (``before(i)`` first, when given) and keep the medians."""
    runs = []
    for i in range(times):
        if before is not None:
            before(i)
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
    """What the prefilter dismisses and what each stage costs (CPU seconds, this process)."""
    sys.path.insert(0, str(REPO))
    from poslint.core.source import SourceText, UndecodableSource
    from poslint.engine.prefilter import code_may_have_findings, raw_may_have_findings, syntax_ok

    datas = [path.read_bytes() for path in files]
    texts = []
    start = time.process_time()
    for data in datas:
        try:
            texts.append(SourceText.from_bytes(data).text)
        except UndecodableSource:
            texts.append(None)
    decode_cpu = time.process_time() - start
    # File by file, each stage timed right after the other, so that a load that changes during the
    # run weighs on both alike.
    raw, code = [], []
    raw_cpu = code_cpu_passed = code_cpu_dismissed = 0.0
    for data, text in zip(datas, texts):
        start = time.process_time()
        raw.append(raw_may_have_findings(data))
        middle = time.process_time()
        code.append(text is None or code_may_have_findings(text))
        end = time.process_time()
        raw_cpu += middle - start
        if raw[-1]:
            code_cpu_passed += end - middle
        else:
            code_cpu_dismissed += end - middle
    analysed = [r and c for r, c in zip(raw, code)]
    start = time.process_time()
    for path, text, passed in zip(files, texts, analysed):
        if not passed and text is not None:
            syntax_ok(text, str(path))
    syntax_cpu = time.process_time() - start
    parse_cpu = walk_cpu = 0.0
    for text, passed in zip(texts, analysed):
        if passed and text is not None:
            start = time.process_time()
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            middle = time.process_time()
            # The least any analysis does: visit each node once, in Python.
            for _ in ast.walk(tree) if tree is not None else ():
                pass
            parse_cpu += middle - start
            walk_cpu += time.process_time() - middle
    return {"files": len(files), "raw_dismissed": raw.count(False), "analysed": sum(analysed),
            "skipped": len(files) - sum(analysed),
            "analysed_bytes": sum(len(d) for d, a in zip(datas, analysed) if a),
            "skipped_bytes": sum(len(d) for d, a in zip(datas, analysed) if not a),
            "raw_unsound": sum(1 for r, c in zip(raw, code) if c and not r),
            "raw_cpu": raw_cpu, "decode_cpu": decode_cpu, "code_cpu_after_raw": code_cpu_passed,
            "code_cpu_alone": code_cpu_passed + code_cpu_dismissed, "syntax_check_cpu": syntax_cpu,
            "parse_cpu": parse_cpu, "walk_cpu": walk_cpu}


# poslint's own command line with the prefilter off, in one process and without a cache: the
# findings without any of the speed-ups.
REFERENCE = r"""
import poslint.engine.checker as checker
import poslint.engine.linter as linter
original = checker.check_text
def check_everything(*args, **kwargs):
    kwargs["prefilter"] = False
    return original(*args, **kwargs)
checker.check_text = linter.check_text = check_everything
from poslint.edge.cli import main
main()
"""

# A -j 1 cold run under cProfile, written to the file named first.
PROFILE = r"""
import cProfile, sys
from poslint.edge.cli import main
out, sys.argv = sys.argv[1], ["poslint", *sys.argv[2:]]
profiler = cProfile.Profile()
try:
    profiler.runcall(main)
except SystemExit:
    pass
profiler.dump_stats(out)
"""

PACKAGES = (("poslint/analysis/", "analysis (interpreter, object model, names, facts)"),
            ("poslint/rules/", "rules"), ("poslint/engine/prefilter.py", "prefilter"),
            ("poslint/engine/", "engine (discovery, config, cache, pool)"), ("poslint/", "other poslint"))


def _package(filename: str, name: str) -> str:
    if filename == "~":  # a built-in
        if "compile" in name:
            return "ast.parse (compile)"
        if "symtable" in name:
            return "symtable (the POS001 syntax check of skipped files)"
        return "other built-ins and C methods (re, str, dict...)"
    if filename.endswith(f"{os.sep}ast.py"):
        return "ast walks (ast.walk, iter_child_nodes, NodeVisitor)"
    if filename.endswith(f"{os.sep}tokenize.py"):
        return "tokenize (noqa comments of files with findings)"
    relative = filename.replace(str(REPO) + os.sep, "")
    return next((label for prefix, label in PACKAGES if relative.startswith(prefix)), "standard library and the rest")


def profile_summary(stats_path: Path, top: int = 15) -> dict:
    """The functions with the most own time, and own time by package, of a cProfile dump."""
    stats = pstats.Stats(str(stats_path))
    by_package: Dict[str, float] = {}
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.stats.items():
        package = _package(filename, name)
        by_package[package] = by_package.get(package, 0.0) + own
        where = name if filename == "~" else f"{filename.replace(str(REPO) + os.sep, '')}:{line}({name})"
        rows.append((own, cumulative, calls, where))
    rows.sort(reverse=True)
    return {"total": sum(by_package.values()), "by_package": sorted(by_package.items(), key=lambda kv: -kv[1]),
            "top": [{"own": o, "cumulative": c, "calls": n, "function": f} for o, c, n, f in rows[:top]]}


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
    parser.add_argument("--earlier", type=Path, help="also time the poslint of this checkout (cold, --jobs)")
    parser.add_argument("--skip-reference", action="store_true",
                        help="do not compare with poslint without its speed-ups (one slow run)")
    parser.add_argument("--skip-profile", action="store_true", help="do not profile a -j 1 cold run")
    parser.add_argument("--skip-flake8", action="store_true")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--no-install", action="store_true", help="do not pip-install TorchFix when it is missing")
    parser.add_argument("--scaling", action="store_true", help="also time parts of the corpus and generated files")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument("--json", type=Path, help="write all measurements to this file")
    args = parser.parse_args(argv)

    source = args.corpus.resolve() if args.corpus else prepare_corpus(args.cache, args.transformers)
    if not source.is_dir():
        parser.error(f"--corpus {args.corpus}: not a directory")
    if args.jobs:
        jobs = args.jobs
    elif hasattr(os, "sched_getaffinity"):
        jobs = len(os.sched_getaffinity(0))
    else:
        jobs = os.cpu_count() or 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="poslint-bench-"))
    try:
        return _run_all(args, source, work, jobs, cores)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_all(args, source: Path, work: Path, jobs: int, cores: int) -> int:
    # Every tool lints a copy: no configuration, .gitignore or exclude above the tree applies.
    corpus = work / source.name
    shutil.copytree(source, corpus, ignore=shutil.ignore_patterns("__pycache__"))
    files = python_files(corpus)
    target = corpus.name  # linted from ``work``, by a relative path
    size = sum(p.stat().st_size for p in files)
    print(f"corpus: {source} ({len(files)} files, {size / 2 ** 20:.1f} MB), copied to {corpus}; {jobs} jobs; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    results: dict = {"corpus": str(source), "files": len(files), "bytes": size, "jobs": jobs,
                     "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                 "python": platform.python_version()},
                     "date": time.strftime("%Y-%m-%d"), "runs": {}}
    runs = results["runs"]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    at = dict(cwd=work, timeout=args.timeout, env=env)

    # In a process of its own: a child's peak RSS on Linux includes what its parent held when it forked.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as separate:
        results["prefilter"] = counts = separate.submit(prefilter_counts, files).result()
    print(f"prefilter: {counts['analysed']} files analysed ({counts['analysed_bytes'] / 2 ** 20:.1f} MB), "
          f"{counts['skipped']} skipped ({counts['skipped_bytes'] / 2 ** 20:.1f} MB), "
          f"{counts['raw_dismissed']} of them by the raw test; CPU: raw test {counts['raw_cpu']:.2f} s, "
          f"decoding {counts['decode_cpu']:.2f} s, code test after it {counts['code_cpu_after_raw']:.2f} s "
          f"(alone, on every file: {counts['code_cpu_alone']:.2f} s), POS001 syntax check of the skipped "
          f"{counts['syntax_check_cpu']:.2f} s, ast.parse of the analysed {counts['parse_cpu']:.2f} s, one ast.walk "
          f"of their trees {counts['walk_cpu']:.2f} s", flush=True)

    posl = poslint_command()
    ruff = tool("ruff")
    if ruff:
        repeat("ruff check --no-cache", [*ruff, "check", "--isolated", "--no-cache", "--exit-zero", "-q", target],
               args.repeat, runs, cwd=work, timeout=args.timeout)
    else:
        print("ruff is not installed: no ratio to ruff (pip install ruff)")
    cold_out = work / "cold.json"
    cold = [*posl, "check", "--no-cache", "--exit-zero"]
    repeat(f"poslint cold (-j {jobs})", [*cold, "--output-format", "json", "-j", str(jobs), target], args.repeat,
           runs, stdout_path=cold_out, **at)
    repeat("poslint cold (-j 1)", [*cold, "-q", "-j", "1", target], args.repeat_slow, runs, **at)
    for n in sorted({1, 2, cores} - {1, jobs}):
        repeat(f"poslint cold (-j {n})", [*cold, "-q", "-j", str(n), target], args.repeat_slow, runs, **at)
    results["scaling"] = {n: runs[f"poslint cold (-j {n})"]["wall"] for n in sorted({1, 2, cores, jobs})}

    cache_dir = work / "cache"
    warm = [*posl, "check", "--exit-zero", "--cache-dir", str(cache_dir)]
    subprocess.run([*warm, "-q", target], cwd=work, stdout=subprocess.DEVNULL, env=env, check=False)
    warm_out = work / "warm.json"
    repeat("poslint warm", [*warm, "--output-format", "json", target], args.repeat, runs, stdout_path=warm_out, **at)
    changed = [str(p.relative_to(work)) for p in files[:: max(1, len(files) // 10)][:10]]

    def change(i: int) -> None:  # each run sees 10 files whose cache entries are stale
        for name in changed:
            with open(work / name, "a", encoding="utf-8") as handle:
                handle.write(f"# changed {i}\n")

    repeat("poslint pre-commit (10 changed files, warm cache)", [*warm, "-q", *changed], args.repeat, runs,
           before=change, **at)

    identical = {"cold == warm": findings_of(cold_out) == findings_of(warm_out)}
    results["findings"] = len(findings_of(cold_out))
    if not args.skip_reference:
        ref_out = work / "reference.json"
        print("reference: poslint without prefilter, pool or cache ...", flush=True)
        repeat("poslint without speed-ups (-j 1)", [sys.executable, "-c", REFERENCE, "check", "--no-cache",
                                                    "--exit-zero", "-j", "1", "--output-format", "json", target],
               args.repeat_slow, runs, stdout_path=ref_out, cwd=work, timeout=args.timeout * 4, env=env)
        identical["cold == no speed-ups"] = findings_of(cold_out) == findings_of(ref_out)
    results["identical"] = identical
    if args.earlier:
        earlier_env = dict(os.environ, PYTHONPATH=str(args.earlier.resolve()))
        repeat(f"earlier poslint cold (-j {jobs}, {args.earlier})", [*cold, "-q", "-j", str(jobs), target],
               args.repeat_slow, runs, cwd=work, timeout=args.timeout, env=earlier_env)

    flake8 = tool("flake8")
    if flake8 and not args.skip_flake8:
        repeat("flake8 (E,F,W,C90)", [*flake8, "--isolated", "--select", "E,F,W,C90", "--exit-zero", "-j", str(jobs),
                                      target], args.repeat_slow, runs, cwd=work, timeout=args.timeout)
    elif not args.skip_flake8:
        print("flake8 is not installed: skipped")

    subset = [str(p.relative_to(work)) for p in files[::7]]
    if not args.skip_torchfix:
        torchfix = tool("torchfix")
        if torchfix is None and not args.no_install and args.corpus is None:
            print("installing torchfix with pip ...", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "torchfix"], check=False)
            torchfix = tool("torchfix")
        if torchfix is None:
            print("TorchFix is not available: skipped")
        else:
            repeat(f"TorchFix ({len(subset)} files)", [*torchfix, *subset], args.repeat_slow, runs, cwd=work,
                   timeout=args.timeout)
            repeat(f"poslint cold ({len(subset)} files)", [*cold, "-q", "-j", str(jobs), *subset], args.repeat,
                   runs, **at)

    if not args.skip_profile:
        print("profile: poslint --no-cache -j 1 under cProfile ...", flush=True)
        stats_path = work / "profile.out"
        subprocess.run([sys.executable, "-c", PROFILE, str(stats_path), "check", "--no-cache", "--exit-zero", "-q",
                        "-j", "1", target], cwd=work, env=env, stdout=subprocess.DEVNULL, check=False,
                       timeout=args.timeout * 4)
        results["profile"] = profile_summary(stats_path) if stats_path.exists() else None

    if args.scaling:
        for fraction in (4, 2, 1):
            part = [str(p.relative_to(work)) for p in files[: len(files) // fraction]]
            repeat(f"poslint cold -j 1, 1/{fraction} of the files", [*cold, "-q", "-j", "1", *part], 1, runs, **at)
        for megabytes in (1, 2, 4):
            for positional in (False, True):
                big = work / f"generated_{megabytes}mb_{'rope' if positional else 'plain'}.py"
                generated_file(big, megabytes, positional)
                repeat(f"poslint, generated {megabytes} MB ({'with' if positional else 'no'} RoPE)",
                       [*cold, "-q", big.name], 1, runs, **at)

    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(results["identical"].values()) and not counts["raw_unsound"] else 1


def report(results: dict) -> None:
    runs = results["runs"]
    base = runs.get("ruff check --no-cache", {}).get("wall")
    print()
    print(f"{'command':<56} {'wall':>8} {'CPU':>8} {'max RSS':>9} {'all RSS':>9} {'x ruff':>7}")
    for name, summary in runs.items():
        ratio = f"{summary['wall'] / base:.2f}" if base else "-"
        flag = " (timed out)" if summary["timed_out"] else ""
        print(f"{name:<56} {summary['wall']:>7.2f}s {summary['cpu']:>7.2f}s {fmt_bytes(summary['max_rss']):>9} "
              f"{fmt_bytes(summary['tree_rss']):>9} {ratio:>7}{flag}")
    scaling = results["scaling"]
    print("scaling (cold wall time by -j): " + ", ".join(
        f"-j {n}: {wall:.2f} s ({scaling[1] / wall:.2f}x)" for n, wall in scaling.items()))
    counts = results["prefilter"]
    floor = sum(counts[k] for k in ("raw_cpu", "decode_cpu", "code_cpu_after_raw", "syntax_check_cpu", "parse_cpu",
                                    "walk_cpu"))
    cores = results["machine"]["cpus"]
    print(f"floor (reading and prefiltering every file, POS001 on the skipped, ast.parse and one ast.walk of the "
          f"analysed, no analysis): {floor:.2f} s of CPU, {floor / cores:.2f} s on {cores} cores at perfect scaling"
          + (f", {floor / cores / base:.2f}x ruff" if base else ""))
    print(f"findings: {results['findings']}; identical: {results['identical']}; "
          f"raw test dismissed a file the code test passes: {results['prefilter']['raw_unsound']}")
    profile = results.get("profile")
    if profile:
        print(f"\nwhere a -j 1 cold run spends its time (cProfile, {profile['total']:.1f} s of own time "
              f"with the profiler's overhead):")
        for package, own in profile["by_package"]:
            print(f"  {own / profile['total']:6.1%}  {package}")
        print("  functions with the most own time:")
        for row in profile["top"]:
            print(f"  {row['own'] / profile['total']:6.1%}  {row['own']:6.2f} s  {row['calls']:>9}  {row['function']}")


if __name__ == "__main__":
    sys.exit(main())
