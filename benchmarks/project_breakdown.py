#!/usr/bin/env python3
"""Where a single-process project-wide run spends its CPU time (issue 16).

Usage, from the root of the project being linted: ``python benchmarks/project_breakdown.py
[POSLINT OPTIONS] FILES...`` (for instance ``-j1 --no-cache $(cat files.txt)``). It runs poslint in
this process, with the project-wide analysis's entry points timed, and prints on stderr: the CPU
seconds spent loading imported modules (parse, object model, module level), in the project
prefilter (and its definition index: outlining or parsing modules, and reading the texts of the
definitions asked for), in imported modules' own runs, the whole run, the peak RSS, how many
modules were loaded (and loaded again after being dropped), how many parses the index and the
units made, and the garbage collector's full passes (how many, their CPU time, what they
freed). A script, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import atexit
import collections
import gc
import os
import resource
import sys
import time

from poslint.analysis import project
from poslint.analysis.interpreter import Interpreter
from poslint.edge.cli import main
from poslint.engine import imports

spent: collections.Counter = collections.Counter()
loads: collections.Counter = collections.Counter()
parsed: set = set()
full_passes = {"count": 0, "seconds": 0.0, "freed": 0, "started": 0.0}


def timed(owner, name: str, label: str, when=lambda *args: True):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            if when(*args):
                spent[label] += time.process_time() - start
    setattr(owner, name, wrapper)


def counted_load(original):
    def load(self, module):
        loads[module] += 1
        return original(self, module)
    return load


def counted_parse(original):
    def parse(text, path):
        spent["parses"] += 1
        parsed.add(os.path.abspath(path))
        return original(text, path)
    return parse


def watch_full_passes(phase: str, info: dict) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        full_passes["started"] = time.process_time()
    else:
        full_passes["count"] += 1
        full_passes["seconds"] += time.process_time() - full_passes["started"]
        full_passes["freed"] += info["collected"]


gc.callbacks.append(watch_full_passes)
project.Project._load = counted_load(project.Project._load)
project.parse_module = counted_parse(project.parse_module)
timed(project.Project, "_load", "loading imported modules")
timed(imports.ProjectFiles, "imports_may_matter", "project prefilter")
timed(imports, "_module_index", "  of which indexing modules (outlines or parses)")
timed(imports._ModuleIndex, "definition", "  of which their definitions' texts")
timed(Interpreter, "run", "imported modules' own runs", when=lambda self: not self.follows_imports)


@atexit.register
def report() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"CPU {usage.ru_utime + usage.ru_stime:.2f} s, peak RSS {usage.ru_maxrss // 1024} MB", file=sys.stderr)
    parses = spent.pop("parses", 0)
    for label, seconds in spent.items():
        print(f"  {label}: {seconds:.2f} s", file=sys.stderr)
    print(f"  modules loaded: {sum(loads.values())} ({len(loads)} distinct); {parses} parses of {len(parsed)} files",
          file=sys.stderr)
    print(f"  full garbage collections: {full_passes['count']}, {full_passes['seconds']:.2f} s, "
          f"{full_passes['freed']} objects freed", file=sys.stderr)


if __name__ == "__main__":
    sys.argv = ["poslint", *sys.argv[1:]]
    main()
