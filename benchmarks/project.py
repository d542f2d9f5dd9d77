#!/usr/bin/env python3
"""The cost of project-wide analysis (following imports) next to per-file analysis, on one tree.

Usage: ``python benchmarks/project.py --corpus DIR [--subdir transformers/models] [--jobs N]``

``DIR`` is the root of a real multi-package tree (for instance an unpacked transformers wheel:
the directory that holds ``transformers/``); it is copied to a temporary directory first, so that
no configuration above it applies and the cache starts empty. The script runs ``poslint`` on
``DIR/<subdir>`` (default: the whole copy):

* per-file (``--no-follow-imports``) and project-wide, each cold (``--no-cache``);
* each warm: a second run with the cache the first one filled;
* a pre-commit-style run of project-wide analysis on 10 files after touching them (their cache
  entries are stale, the rest of the project is not read unless they import it);
* project-wide after changing one imported module (what depends on it is analysed again).

For each it prints the wall time, the CPU time of poslint and its workers, the number of findings,
and the ratio to the per-file cold run. This is a script, not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List


def run(args: List[str], cwd: Path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "poslint", "--output-format", "json", *args], cwd=cwd,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"poslint {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, cpu, len(json.loads(proc.stdout or "[]"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="root of the tree (the directory that holds the packages)")
    parser.add_argument("--subdir", default=".", help="what to lint, relative to the corpus root")
    parser.add_argument("--jobs", type=int, default=0, help="poslint -j (0: one per core)")
    options = parser.parse_args()
    source = Path(options.corpus).resolve()
    with tempfile.TemporaryDirectory(prefix="poslint-project-bench-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns("__pycache__", "*.dist-info"))
        target = options.subdir
        jobs = ["-j", str(options.jobs)] if options.jobs else []
        files = sorted(p for p in (tree / target).rglob("*.py"))
        print(f"tree: {source} ({len(files)} files under {target}), jobs: {options.jobs or os.cpu_count()}")
        rows = []

        def measure(label: str, args: List[str]) -> None:
            wall, cpu, found = run([*jobs, *args], tree)
            rows.append((label, wall, cpu, found))
            print(f"  {label:<44} {wall:7.2f} s wall {cpu:7.2f} s CPU {found:5d} findings", flush=True)

        measure("per-file, cold", ["--no-cache", "--no-follow-imports", target])
        measure("project-wide, cold", ["--no-cache", target])
        cache = Path(tmp) / "cache-per-file"
        measure("per-file, filling the cache", ["--cache-dir", str(cache), "--no-follow-imports", target])
        measure("per-file, warm", ["--cache-dir", str(cache), "--no-follow-imports", target])
        cache = Path(tmp) / "cache-project"
        measure("project-wide, filling the cache", ["--cache-dir", str(cache), target])
        measure("project-wide, warm", ["--cache-dir", str(cache), target])
        changed = files[:: max(1, len(files) // 10)][:10]
        for path in changed:
            path.write_text(path.read_text() + "\n")
        measure("project-wide, 10 touched files (pre-commit)",
                ["--cache-dir", str(cache), *[str(p.relative_to(tree)) for p in changed]])
        imported = next((p for p in tree.rglob("modeling_rope_utils.py")), None) or files[0]
        imported.write_text(imported.read_text() + "\n")
        measure(f"project-wide, warm after editing {imported.name}", ["--cache-dir", str(cache), target])
        base = rows[0][1]
        print("\n| run | wall | CPU | findings | wall / per-file cold |\n|---|---|---|---|---|")
        for label, wall, cpu, found in rows:
            print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {found} | {wall / base:.2f} |")


if __name__ == "__main__":
    main()
