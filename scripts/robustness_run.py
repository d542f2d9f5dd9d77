#!/usr/bin/env python
"""Lint (and fix, in memory) real Python: the running interpreter's standard library and the
real-world-style model files in tests/realworld, and report what went wrong.

    python scripts/robustness_run.py                 # everything, on every core
    python scripts/robustness_run.py --sample 300    # a deterministic sample of the standard library
    python scripts/robustness_run.py --jobs 1 PATH   # extra files or directories too, in one process
    python scripts/robustness_run.py --no-stdlib --crafted   # only tests/realworld and the crafted inputs

Each file goes through ``poslint.engine.linter.lint_file`` with every rule, twice: linting, and fixing
with unsafe fixes as well but without writing (as ``--diff --unsafe-fixes`` would). Counted: files,
files poslint cannot parse (POS001: the standard library's tests keep deliberately broken
files), findings per rule, fixes, refused fixes, internal errors, and exceptions that escaped
``lint_file`` (which would be tracebacks). ``--crafted`` adds inputs made to break the fixer and
the resource bounds (issue 15: boolean chains of 8,000 and 30,000 operands, lone-CR line endings,
form feeds, 8,000 implicitly concatenated strings, files over the size that poslint parses), each
with its expected outcome, checked in a process of its own so that a crash is counted, not fatal.
The exit status is 1 if there is any internal error, escaped exception or crafted input that does
not come out as expected, else 0. Every file is analysed, even those poslint's text prefilter would
clear without parsing (``--prefilter`` lets it clear them, as the command line does).
``tests/test_robustness_corpus.py`` runs a sample in CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
REALWORLD = ROOT / "tests" / "realworld"

# Standard-library files that are hard on a linter, always part of a sample when present:
# bad encodings, deliberate syntax errors, Python 2 code, huge or deeply nested files.
NASTY = (
    "test/bad_coding.py", "test/bad_coding2.py", "test/badsyntax_3131.py", "test/badsyntax_pep3120.py",
    "test/badsyntax_future3.py", "test/test_grammar.py", "test/test_unicode_identifiers.py",
    "test/test_source_encoding.py", "test/test_tokenize.py", "test/test_syntax.py", "test/test_fstring.py",
    "test/encoded_modules/module_iso_8859_1.py", "test/encoded_modules/module_koi8_r.py",
    "test/tokenizedata/bad_coding.py", "test/tokenizedata/bad_coding2.py", "test/tokenizedata/badsyntax_3131.py",
    "test/tokenizedata/badsyntax_pep3120.py", "test/tokenizedata/coding20731.py",
    "lib2to3/tests/data/py2_test_grammar.py", "lib2to3/tests/data/bom.py", "lib2to3/tests/data/crlf.py",
    "lib2to3/tests/data/different_encoding.py", "lib2to3/tests/data/false_encoding.py",
    "pydoc_data/topics.py", "test/test_typing.py", "test/test_patma.py", "test/test_compile.py",
    "test/test_ast.py", "test/test_unparse.py", "test/test_peg_generator/__init__.py",
)


def stdlib_files() -> List[Path]:
    """Every ``.py`` file of the running interpreter's standard library (no site-packages)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    skip = {"site-packages", "dist-packages", "__pycache__"}
    files = []
    for top, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        files.extend(Path(top) / name for name in sorted(filenames) if name.endswith(".py"))
    return files


def sample(files: Sequence[Path], size: int) -> List[Path]:
    """A deterministic sample: the NASTY files that exist, then evenly spaced ones."""
    if size >= len(files):
        return list(files)
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    chosen = [stdlib / name for name in NASTY if (stdlib / name).is_file()][:size]
    rest = [f for f in files if f not in set(chosen)]
    need = size - len(chosen)
    step = len(rest) / need if need else 1
    chosen += [rest[int(i * step)] for i in range(need)]
    return chosen


# A rotary module with a safe fix (positions that take the buffer's dtype), for the crafted inputs.
CRAFTED_MODEL = '''import torch
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


def crafted_inputs(directory: Path) -> Dict[Path, str]:
    """Write the crafted inputs into ``directory``; each file and what must come of it:
    ``fixed`` (fixes applied, none refused), ``refused`` (fixes refused, nothing crashed) or
    ``skipped`` (too large to parse, no finding, no fix)."""
    from poslint.engine.linter import LARGE_TEXT

    def chain(op: str, n: int) -> str:
        return "\nflag = " + f" {op} ".join(["x"] * n) + "\n"

    strings = "\nTEXT = (\n" + "".join(f'    "part {i}"\n' for i in range(8000)) + ")\n"
    cases = {
        "bool_chain_and_8000.py": (CRAFTED_MODEL + chain("and", 8000), "fixed"),
        "bool_chain_or_8000.py": (CRAFTED_MODEL + chain("or", 8000), "fixed"),
        "bool_chain_and_30000.py": (CRAFTED_MODEL + chain("and", 30000), "refused"),
        "lone_cr.py": (CRAFTED_MODEL.replace("\n", "\r"), "fixed"),
        "form_feed.py": (CRAFTED_MODEL.replace("\nclass", "\n\f\nclass")
                         .replace("\n    def forward", "\n\f    def forward"), "fixed"),
        "strings_8000.py": (CRAFTED_MODEL + strings, "fixed"),
        "large_generated.py": ("X = [" + ", ".join(["1"] * (LARGE_TEXT // 3 + 1)) + "]\n", "skipped"),
        "large_assignments.py": ("x = 1\n" * (LARGE_TEXT // 6 + 1), "skipped"),
    }
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (text, expected) in cases.items():
        path = directory / name
        path.write_bytes(text.encode())
        out[path] = expected
    return out


def crafted_problem(path: Path, expected: str) -> Optional[str]:
    """None if ``path`` comes out of a ``--fix`` (in memory) as ``expected``; else what went wrong.
    The check runs in a child process, so that a crash (exit 139) is reported here."""
    import json
    import subprocess

    code = ("import sys, json; sys.path.insert(0, sys.argv[2]); "
            "from poslint.engine.linter import LintOptions, lint_file; from poslint.rules import all_rules; "
            "r = lint_file(sys.argv[1], LintOptions(codes=frozenset(all_rules()), fix=True, write=False)); "
            "print(json.dumps({'fixed': r.fixed, 'errors': r.errors, 'internal': r.internal_errors, "
            "'notes': r.notes, 'findings': len(r.diagnostics)}))")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return f"{path.name}: exit status {done.returncode}: {done.stderr.strip()[-300:]}"
    r = json.loads(done.stdout)
    if r["internal"]:
        return f"{path.name}: internal errors {r['internal']}"
    refused = [e for e in r["errors"] if ": not fixed: " in e]
    if expected == "fixed" and (not r["fixed"] or refused):
        return f"{path.name}: expected fixes, got {r['fixed']} fixes, refused: {refused}"
    if expected == "refused" and not refused:
        return f"{path.name}: expected the fixes to be refused, got {r['fixed']} fixes"
    if expected == "skipped" and (r["findings"] or r["fixed"] or not r["notes"]):
        return f"{path.name}: expected a note and nothing else, got {r}"
    return None


def realworld_files() -> List[Path]:
    return sorted(REALWORLD.rglob("*.py"))


@dataclass
class FileReport:
    path: str
    codes: Dict[str, int] = field(default_factory=dict)
    fixed: int = 0
    refused: List[str] = field(default_factory=list)  # fixes poslint would not apply, and why
    internal_errors: List[str] = field(default_factory=list)
    exception: Optional[str] = None  # an exception that escaped lint_file: a traceback in the CLI
    seconds: float = 0.0


def full_analysis(enabled: bool = True) -> None:
    """Analyse every file, even those the prefilter would clear without parsing: the analysis
    then meets all of the standard library, not just the files that mention frequencies."""
    import poslint.engine.checker

    if not hasattr(poslint.engine.checker, "_real_cleared"):
        poslint.engine.checker._real_cleared = poslint.engine.checker._cleared
    poslint.engine.checker._cleared = (lambda text, path, codes, project=None: False) if enabled else poslint.engine.checker._real_cleared


def check_file(path: str) -> FileReport:
    from poslint.engine.linter import LintOptions, lint_file
    from poslint.rules import all_rules

    codes = frozenset(all_rules())
    report = FileReport(path)
    start = time.perf_counter()
    try:
        lint = lint_file(path, LintOptions(codes=codes))
        report.codes = dict(Counter(d.code for d in lint.diagnostics))
        report.internal_errors += lint.internal_errors
        fix = lint_file(path, LintOptions(codes=codes, fix=True, write=False, unsafe_fixes=True))
        report.fixed = fix.fixed
        report.refused = [e for e in fix.errors if ": not fixed: " in e]
        report.internal_errors += [e for e in fix.internal_errors if e not in report.internal_errors]
    except BaseException:  # noqa: BLE001 - that is what this script looks for
        report.exception = traceback.format_exc()
    report.seconds = time.perf_counter() - start
    return report


@dataclass
class Summary:
    files: int = 0
    unparsable: int = 0
    findings: Counter = field(default_factory=Counter)
    fixed: int = 0
    refused: List[str] = field(default_factory=list)
    internal_errors: List[str] = field(default_factory=list)
    exceptions: List[str] = field(default_factory=list)
    slowest: List[tuple] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.internal_errors and not self.exceptions

    def lines(self, label: str) -> List[str]:
        findings = ", ".join(f"{code} {n}" for code, n in sorted(self.findings.items()) if code != "POS001")
        out = [f"{label}: {self.files} files in {self.seconds:.1f}s; {self.unparsable} not parsable (POS001); "
               f"findings: {findings or 'none'}; {self.fixed} fixes; {len(self.refused)} fixes refused; "
               f"{len(self.internal_errors)} internal errors; {len(self.exceptions)} tracebacks"]
        out += [f"  refused: {m}" for m in self.refused[:20]]
        out += [f"  internal error: {m}" for m in self.internal_errors[:50]]
        out += [f"  traceback:\n{m}" for m in self.exceptions[:10]]
        out += [f"  slow: {path} {seconds:.1f}s" for seconds, path in self.slowest if seconds > 2]
        return out


def run(files: Iterable[Path], jobs: int = 0, full: bool = True) -> Summary:
    """Check ``files``; ``full``: analyse every file (no prefilter), as :func:`full_analysis`."""
    paths = [str(f) for f in files]
    summary = Summary(files=len(paths))
    start = time.perf_counter()
    full_analysis(full)
    if jobs == 1 or len(paths) < 16:
        reports = map(check_file, paths)
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1, initializer=full_analysis,
                                   initargs=(full,))
        reports = pool.map(check_file, paths, chunksize=4)
    timings = []
    for report in reports:
        summary.unparsable += "POS001" in report.codes
        summary.findings.update(report.codes)
        summary.fixed += report.fixed
        summary.refused += report.refused
        summary.internal_errors += report.internal_errors
        if report.exception:
            summary.exceptions.append(f"{report.path}:\n{report.exception}")
        timings.append((report.seconds, report.path))
    if pool is not None:
        pool.shutdown()
    summary.slowest = sorted(timings, reverse=True)[:5]
    summary.seconds = time.perf_counter() - start
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="more files or directories to check")
    parser.add_argument("--sample", type=int, default=0, help="check only this many standard-library files")
    parser.add_argument("--jobs", type=int, default=0, help="processes (default: one per core)")
    parser.add_argument("--no-stdlib", action="store_true", help="skip the standard library")
    parser.add_argument("--crafted", action="store_true",
                        help="also check the crafted inputs of issue 15, each against its expected outcome")
    parser.add_argument("--prefilter", action="store_true",
                        help="let the prefilter clear files, as poslint does (default: analyse every file)")
    args = parser.parse_args(argv)

    groups = []
    if not args.no_stdlib:
        files = stdlib_files()
        groups.append((f"standard library of Python {sys.version.split()[0]}",
                       sample(files, args.sample) if args.sample else files))
    groups.append(("tests/realworld", realworld_files()))
    extra = []
    for path in args.paths:
        extra += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    if extra:
        groups.append(("extra paths", extra))
    ok = True
    for label, files in groups:
        summary = run(files, args.jobs, full=not args.prefilter)
        print("\n".join(summary.lines(label)), flush=True)
        ok = ok and summary.ok
    if args.crafted:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            cases = crafted_inputs(Path(tmp))
            problems = [p for p in (crafted_problem(path, expected) for path, expected in cases.items()) if p]
        print(f"crafted inputs: {len(cases)} files; {len(problems)} not as expected", flush=True)
        print("".join(f"  {p}\n" for p in problems), end="", flush=True)
        ok = ok and not problems
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
