#!/usr/bin/env python
"""Lint (and fix, in memory) real Python: the running interpreter's standard library and the
real-world-style model files in tests/realworld, and report what went wrong.

    python scripts/robustness_run.py                 # everything, on every core
    python scripts/robustness_run.py --sample 300    # a deterministic sample of the standard library
    python scripts/robustness_run.py --jobs 1 PATH   # extra files or directories too, in one process

Each file goes through ``poslint.engine.linter.lint_file`` with every rule, twice: linting, and fixing
with unsafe fixes as well but without writing (as ``--diff --unsafe-fixes`` would). Counted: files,
files poslint cannot parse (POS001: the standard library's tests keep deliberately broken
files), findings per rule, fixes, refused fixes, internal errors, and exceptions that escaped
``lint_file`` (which would be tracebacks). The exit status is 1 if there is any internal error
or escaped exception, else 0. Every file is analysed, even those poslint's text prefilter would
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
    poslint.engine.checker._cleared = (lambda text, path, codes: False) if enabled else poslint.engine.checker._real_cleared


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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
