"""The ``poslint`` command line.

``poslint [OPTIONS] [PATHS]...`` is short for ``poslint check [OPTIONS] [PATHS]...``: any first
argument that is not a subcommand name (or a top-level ``--help``/``-h``/``--version``) goes to
``check``. To lint a directory whose name is a subcommand, write ``poslint check rule`` or
``poslint ./rule``.
"""

from __future__ import annotations

import errno
import signal
import sys
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import click

from poslint import __version__
from poslint.core.diagnostics import Diagnostic
from poslint.core.source import SourceText, UndecodableSource
from poslint.edge.output import FORMATTERS, Report, fixes_applied, fixes_available, statistics
from poslint.engine.add_noqa import add_noqa as add_noqa_comments
from poslint.engine.buffer import lint_buffer, options_for
from poslint.engine.project import TF32_RULE, project_reduced_matmul, scan_reduced_matmul
from poslint.engine.cache import DEFAULT_DIR as DEFAULT_CACHE
from poslint.engine.checker import PARSE_ERROR
from poslint.engine.config import Config, ConfigError, Resolver, Selection, codes_list, parse_override
from poslint.engine.files import Discovery, discover, read_source
from poslint.engine.gitignore import GitIgnore
from poslint.engine.linter import FileResult, LintOptions
from poslint.fix.fixer import applicable, write_atomic
from poslint.integrations.notebook import lint_notebook
from poslint.rules import all_rules

_TOP_LEVEL_OPTIONS = ("--help", "-h", "--version")


class _DefaultToCheck(click.Group):
    """A group that runs ``check`` when the first argument is not a subcommand, and that turns any
    unexpected exception into ``poslint: internal error: ...`` with exit status 2."""

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        if not args or (args[0] not in self.commands and args[0] not in _TOP_LEVEL_OPTIONS):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            _internal_error(ctx, exc)
        except Exception as exc:  # noqa: BLE001 - never show a traceback
            _internal_error(ctx, exc)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM while linting: 128 + the signal, as shells do
            _echo("poslint: interrupted", err=True)
            ctx.exit(128 + getattr(exc, "signum", signal.SIGINT))


def _safe_bytes(text: str) -> bytes:
    """``text`` in UTF-8, where a file name's bytes that are not UTF-8 (which Python keeps as lone
    surrogates) are written back as they were."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _echo(message: str, err: bool = False, nl: bool = True, color: Optional[bool] = None) -> None:
    """``click.echo``, except that text the stream cannot encode (a file name that is not UTF-8,
    a name the terminal's encoding lacks) is written as UTF-8 bytes instead of failing the run."""
    try:
        click.echo(message, err=err, nl=nl, color=color)
    except UnicodeEncodeError:
        click.echo(_safe_bytes(message), err=err, nl=nl, color=color)


def _internal_error(ctx: click.Context, exc: BaseException) -> None:
    _echo(f"poslint: internal error: {type(exc).__name__}: {exc}", err=True)
    ctx.exit(2)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="poslint")
def main() -> None:
    """Find positional-encoding (RoPE, ALiBi) precision bugs in PyTorch code.

    Run `poslint [OPTIONS] [PATHS]...` to lint (the same as `poslint check`); see
    `poslint check --help` for the options.
    """


@main.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes) in place.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="Also apply (with --fix or --diff) and count as fixable the fixes marked unsafe. "
                   "Overrides the `unsafe-fixes` config key; off by default.")
@click.option("--assume-tf32/--no-assume-tf32", default=None,
              help="Report angle products through matmuls (POS107) as if float32 matmuls ran in TF32, even "
                   "where no linted file enables it. Overrides the `assume-tf32` config key; off by default.")
@click.option("--follow-imports/--no-follow-imports", default=None,
              help="Follow calls and base classes imported from the project's other modules (read, never "
                   "imported; nothing is reported for them). Overrides the `follow-imports` config key; on by "
                   "default.")
@click.option("--fix-only", is_flag=True,
              help="Apply fixes like --fix, but do not report the findings that remain; exit 0 unless "
                   "something failed (or, with --exit-non-zero-on-fix, something was fixed).")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when --fix (or --fix-only) fixed something, even if no finding remains.")
@click.option("--unfixable", multiple=True, metavar="CODES",
              help="Never fix these rules (their findings are reported without a fix). Adds to the "
                   "`unfixable` config key.")
@click.option("--diff", is_flag=True,
              help="Print the fixes as unified diffs instead of writing them; exit 1 if there are any.")
@click.option("--add-noqa", is_flag=True,
              help="Add `# noqa: CODE` comments to every line with a finding (merged into a `# noqa: ...` "
                   "already there) and write the files; exit 0 unless something failed.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even if findings remain (errors still exit 2).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Enable only these rules (codes, prefixes such as POS1, or ALL; comma-separated, "
                   "repeatable). Replaces the config's selection.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Enable these rules as well.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Disable these rules.")
@click.option("--extend-per-file-ignores", multiple=True, metavar="GLOB:CODES",
              help="Disable these rules in files matching GLOB (relative to the current directory), on top "
                   "of the config's per-file-ignores; repeatable.")
@click.option("--config", "config_args", multiple=True, metavar="PATH | KEY=VALUE",
              help="A TOML file to use for every file instead of the closest configuration (at most one), "
                   "or a `KEY = VALUE` TOML pair that overrides one key, such as `select = [\"POS1\"]` "
                   "(repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Skip files and directories matching GLOB (repeatable). Replaces the default "
                   "excludes and the config's `exclude`.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB",
              help="Skip files and directories matching GLOB, on top of the other excludes (repeatable).")
@click.option("--force-exclude", is_flag=True,
              help="Apply the excludes to paths given on the command line too (for pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Skip files that .gitignore files ignore while walking directories (the default; "
                   "overrides the `respect-gitignore` config key).")
@click.option("--ignore-noqa", is_flag=True, help="Report findings even on lines with `# noqa` comments.")
@click.option("--stdin-filename", metavar="PATH",
              help="Read the source from stdin (also `poslint -`) and lint it as PATH: its configuration and "
                   "per-file-ignores apply. With --fix, the fixed source goes to stdout.")
@click.option("--output-format", type=click.Choice(list(FORMATTERS)), default="concise", show_default=True,
              envvar="POSLINT_OUTPUT_FORMAT", show_envvar=True,
              help="How findings are printed: concise (path:line:col: CODE message), full (with a code frame "
                   "and the fix as a diff), json, json-lines (one JSON object per line), github (Actions "
                   "annotations), sarif (SARIF 2.1.0), pylint, gitlab (GitLab Code Quality), junit (JUnit XML), "
                   "rdjson (reviewdog) or azure (Azure Pipelines logging commands).")
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True), metavar="PATH",
              help="Write the findings (or the diffs, with --diff) to PATH instead of stdout.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the concise and full output: auto colours a terminal unless NO_COLOR is set "
                   "(FORCE_COLOR forces it).")
@click.option("--statistics", "statistics_", is_flag=True,
              help="Print the number of findings per rule instead of the findings themselves.")
@click.option("--show-fixes", is_flag=True,
              help="With --fix, list the fixes made per file and rule; otherwise list the fixes available "
                   "for the remaining findings (on stderr).")
@click.option("--show-settings", is_flag=True,
              help="Print the settings that apply to the first path (its configuration files, rules, "
                   "excludes...) and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, one per line, and exit.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings and errors only: no summary and no notes.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, metavar="N",
              help="Lint with N processes (default 0: one per CPU core). Small runs stay in one process.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache of results.")
@click.option("--cache-dir", type=click.Path(), metavar="DIR", envvar="POSLINT_CACHE_DIR",
              show_envvar=True,
              help="Keep the cache of results in DIR (default: .poslint_cache in each file's project root, the "
                   "directory of its configuration file, or else the current directory).")
def check(paths: Tuple[str, ...], fix: bool, unsafe_fixes: Optional[bool], assume_tf32: Optional[bool],
          follow_imports: Optional[bool], fix_only: bool,
          exit_non_zero_on_fix: bool, unfixable: Tuple[str, ...], diff: bool, add_noqa: bool, exit_zero: bool,
          select: Tuple[str, ...], extend_select: Tuple[str, ...], ignore: Tuple[str, ...],
          extend_per_file_ignores: Tuple[str, ...], config_args: Tuple[str, ...], exclude: Tuple[str, ...],
          extend_exclude: Tuple[str, ...], force_exclude: bool, respect_gitignore: Optional[bool],
          ignore_noqa: bool, stdin_filename: Optional[str], output_format: str, output_file: Optional[str],
          color: str, statistics_: bool, show_fixes: bool, show_settings: bool, show_files: bool, quiet: bool,
          jobs: int, no_cache: bool, cache_dir: Optional[str]) -> None:
    """Lint PATHS (files and directories, recursively; default: the current directory; `-`: stdin).

    Each file is linted with the configuration closest to it. Linting only reads the source: it
    never imports or runs it (unlike `poslint verify`).
    """
    ctx = click.get_current_context()
    fix = fix or fix_only
    use_stdin = paths == ("-",) or (stdin_filename is not None and not paths)
    if "-" in paths and not use_stdin:
        raise click.UsageError("`-` (stdin) cannot be given with other paths", ctx)
    if sum((fix and not fix_only, fix_only, diff, add_noqa)) > 1 and not (fix and diff):
        raise click.UsageError("give at most one of --fix, --fix-only, --diff and --add-noqa", ctx)
    paths = () if use_stdin else (paths or (".",))
    try:
        resolver = _resolver(config_args, select, extend_select, ignore, extend_per_file_ignores, exclude,
                             extend_exclude, unsafe_fixes, unfixable, respect_gitignore, assume_tf32, follow_imports)
        if show_settings:
            _echo(_settings_text(paths[0] if paths else (stdin_filename or "."), resolver, stdin_filename), nl=False)
            ctx.exit(0)
        if use_stdin:
            ctx.exit(_lint_stdin(stdin_filename or "-", resolver, fix=fix, diff=diff, fix_only=fix_only,
                                 unsafe=unsafe_fixes, ignore_noqa=ignore_noqa, force_exclude=force_exclude,
                                 output_format=output_format, exit_zero=exit_zero,
                                 exit_non_zero_on_fix=exit_non_zero_on_fix, quiet=quiet))
        found = _discover(paths, resolver, force_exclude)
        if show_files:
            for message in found.errors:
                _echo(f"poslint: error: {message}", err=True)
            _echo("".join(f"{path}\n" for path in sorted(found.files)), nl=False)
            ctx.exit(2 if found.errors else 0)
        groups = _groups(found.files, resolver, fix=fix or diff, no_cache=no_cache, cache_dir=cache_dir)
    except ConfigError as exc:
        _echo(f"poslint: error: {exc}", err=True)
        ctx.exit(2)

    failed = bool(found.errors)
    for message in found.errors:
        _echo(f"poslint: error: {message}", err=True)
    if not quiet:
        for message in found.notes:
            _echo(f"poslint: note: {message}", err=True)

    if add_noqa:
        ctx.exit(_add_noqa(found.files, groups, ignore_noqa, jobs, quiet, failed))
    results, unsafe_of = _lint_groups(found.files, groups, ignore_noqa=ignore_noqa, fix=fix or diff,
                                      write=fix and not diff, jobs=jobs, quiet=quiet)
    for result in results:
        for message in result.errors:
            _echo(f"poslint: error: {message}", err=True)
        failed = failed or bool(result.errors)
        for message in [] if quiet else result.notes:
            _echo(f"poslint: note: {message}", err=True)
    if not found.files and not found.errors and not quiet and not (force_exclude and all(map(os.path.isfile, paths))):
        _echo("poslint: warning: No Python files found", err=True)

    internal = [m for r in results for m in r.internal_errors]
    for message in internal:
        _echo(f"poslint: internal error: {message}", err=True)
    failed = failed or bool(internal)

    remaining = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)
    fixed = sum(r.fixed for r in results)
    report = Report(remaining, lambda d: applicable(d.fix, unsafe_of[d.path]),
                    {r.path: r.source_map for r in results if r.source_map is not None},
                    color=_use_color(color, output_file))
    if diff:
        text = "".join(r.diff for r in results)
    elif fix_only:
        text = ""
    elif statistics_:
        text = statistics(report, output_format)
    else:
        text = FORMATTERS[output_format](report)
    failed = not _write_output(text, output_file, report.color) or failed
    if show_fixes and not diff:
        shown = fixes_applied({r.path: r.fixed_codes for r in results}) if fix else fixes_available(report)
        if shown:
            _echo("Fixed:" if fix else "Fixes available:", err=True)
        for line in shown:
            _echo(line, err=True)
    # Nothing to lint (say, pre-commit passed only excluded files) is quiet: no summary at all.
    if not quiet and (found.files or failed):
        lines = (([f"Fixed {_problems(fixed)}."] if fixed else ["No fixes applied."]) if fix_only
                 else _summary(remaining, fixed, diff, fix, lambda d: unsafe_of[d.path], failed))
        for line in lines:
            _echo(line, err=True)

    if failed:
        ctx.exit(2)
    if exit_non_zero_on_fix and fixed and not diff:
        ctx.exit(1)
    if exit_zero or fix_only:
        ctx.exit(0)
    if diff:
        ctx.exit(1 if any(r.diff for r in results) else 0)
    ctx.exit(1 if remaining else 0)


def _resolver(config_args, select, extend_select, ignore, extend_per_file_ignores, exclude, extend_exclude,
              unsafe_fixes, unfixable, respect_gitignore, assume_tf32=None, follow_imports=None) -> Resolver:
    """The settings of each file: its configuration, then ``--config KEY=VALUE``, then the options."""
    # As in ruff: an argument is a KEY = VALUE override unless it names a file (or has no `=`).
    files = [arg for arg in config_args if os.path.exists(arg) or "=" not in arg]
    for arg in files:
        if not os.path.exists(arg):
            raise ConfigError(f"--config {arg}: no such file")
    if len(files) > 1:
        raise ConfigError(f"--config: give at most one configuration file, got {', '.join(files)}")
    overrides = [parse_override(arg) for arg in config_args if arg not in files]
    command_line = Config(selection=Selection(codes_list(list(select)) or None, codes_list(list(extend_select)),
                                              codes_list(list(ignore))),
                          exclude=tuple(exclude) or None, extend_exclude=tuple(extend_exclude),
                          unsafe_fixes=unsafe_fixes, unfixable=codes_list(list(unfixable)),
                          extend_per_file_ignores=_per_file_option(extend_per_file_ignores),
                          respect_gitignore=respect_gitignore, assume_tf32=assume_tf32,
                          follow_imports=follow_imports, base=Path.cwd())
    resolver = Resolver(Path(files[0]) if files else None, overrides, (command_line, "--{}"))
    resolver.for_directory(os.getcwd())  # report bad options and a bad configuration before any work
    return resolver


def _per_file_option(values: Sequence[str]) -> Dict[str, Tuple[str, ...]]:
    found: Dict[str, Tuple[str, ...]] = {}
    for value in values:
        glob, sep, codes = value.rpartition(":")
        if not sep or not glob or not codes.strip():
            raise ConfigError(f"--extend-per-file-ignores: expected GLOB:CODES, got {value!r}")
        found[glob] = found.get(glob, ()) + codes_list([codes])
    return found


def _discover(paths: Sequence[str], resolver: Resolver, force_exclude: bool) -> Discovery:
    """The files to lint; each path is excluded by the configuration of the directory it is in."""
    gitignore = GitIgnore()

    def exclusion(path: str, named: bool) -> bool:
        settings = resolver.for_directory(os.path.dirname(os.path.abspath(path)))
        if settings.excluded(path):
            return True
        return not named and settings.respect_gitignore and gitignore.ignored(path, os.path.isdir(path))

    return discover(paths, (), Path.cwd(), force_exclude, exclusion)


# The files of one run that share their options: (rules, unsafe fixes, unfixable rules, cache directory,
# assume-tf32, where first-party modules live when imports are followed).
GroupKey = Tuple[FrozenSet[str], bool, FrozenSet[str], Optional[str], bool, Optional[Tuple[str, ...]]]


def _groups(files: Sequence[str], resolver: Resolver, fix: bool, no_cache: bool,
            cache_dir: Optional[str]) -> Dict[GroupKey, List[int]]:
    groups: Dict[GroupKey, List[int]] = {}
    for index, path in enumerate(files):
        settings = resolver.for_path(path)
        # The cache keys results by the rules only: a fix run that drops fixes (unfixable) is not cached.
        cacheable = not no_cache and not (fix and settings.unfixable)
        directory = (cache_dir or str(settings.root / DEFAULT_CACHE)) if cacheable else None
        if not settings.codes:
            raise ConfigError(f"the rule selection for {path} matches no rule (see select, extend-select and ignore)")
        key = (settings.file_codes(path), settings.unsafe_fixes, settings.unfixable, directory, settings.assume_tf32,
               settings.src if settings.follow_imports else None)
        groups.setdefault(key, []).append(index)
    return groups


def _lint_groups(files: Sequence[str], groups: Dict[GroupKey, List[int]], ignore_noqa: bool, fix: bool,
                 write: bool, jobs: int, quiet: bool) -> Tuple[List[FileResult], Dict[str, bool]]:
    """Lint every group with its options; the results in the order of ``files``, and whether
    unsafe fixes apply to each path."""
    results: List[Optional[FileResult]] = [None] * len(files)
    unsafe_of: Dict[str, bool] = {}
    # A reduced-precision matmul setting in one file of the run counts for the part of the tree its
    # process runs (poslint/engine/project.py). Only POS107 reads it; the scan reads every file once
    # (0.13 s for transformers' 2597 models files), and parses only the files that set it (or import
    # a helper that does).
    scan = scan_reduced_matmul(files) if any(TF32_RULE in key[0] for key in groups) else None
    for (codes, unsafe, unfixable, directory, assume_tf32, src), indices in groups.items():
        by_reason: Dict[Optional[str], List[int]] = {}
        for index in indices:
            found = scan.reason_for(files[index]) if scan is not None and TF32_RULE in codes else None
            by_reason.setdefault(project_reduced_matmul(found, assume_tf32), []).append(index)
        for reduced_matmul, reached in by_reason.items():
            options = LintOptions(codes=codes, ignore_noqa=ignore_noqa, fix=fix, write=write, unsafe_fixes=unsafe,
                                  handlers={".ipynb": lint_notebook}, unfixable=unfixable,
                                  reduced_matmul=reduced_matmul, src=src)
            group_files = [files[i] for i in reached]
            for index, result in zip(reached, _lint_all(group_files, options, jobs, directory, quiet)):
                if not fix and unfixable:
                    result.diagnostics = [replace(d, fix=None) if d.code in unfixable else d
                                          for d in result.diagnostics]
                results[index] = result
                unsafe_of[result.path] = unsafe
    return [r for r in results if r is not None], unsafe_of


def _add_noqa(files: Sequence[str], groups: Dict[GroupKey, List[int]], ignore_noqa: bool, jobs: int,
              quiet: bool, failed: bool) -> int:
    """``--add-noqa``: lint, then write a ``# noqa: CODE`` comment on each line with a finding."""
    results, _ = _lint_groups(files, groups, ignore_noqa=False, fix=False, write=False, jobs=jobs, quiet=quiet)
    added = 0
    for result in results:
        for message in result.errors + result.internal_errors:
            _echo(f"poslint: error: {message}", err=True)
            failed = True
        findings = [d for d in result.diagnostics if d.code != PARSE_ERROR]
        if not findings:
            continue
        if result.path.endswith(".ipynb"):
            if not quiet:
                _echo(f"poslint: note: {result.path}: --add-noqa does not edit notebooks", err=True)
            continue
        try:
            data = read_source(result.path)
            source = SourceText.from_bytes(data)
            text, count, skipped = add_noqa_comments(source.text, findings)
            if count:
                write_atomic(result.path, source.to_bytes(text))
        except (OSError, UndecodableSource, UnicodeEncodeError) as exc:
            _echo(f"poslint: error: {result.path}: not changed: {exc}", err=True)
            failed = True
            continue
        added += count
        if skipped and not quiet:
            _echo(f"poslint: note: {result.path}: {skipped} line(s) cannot take a comment without changing the "
                  f"code (inside a string or after a line continuation)", err=True)
    if not quiet:
        _echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.", err=True)
    return 2 if failed else 0


def _lint_stdin(path: str, resolver: Resolver, fix: bool, diff: bool, fix_only: bool, unsafe: Optional[bool],
                ignore_noqa: bool, force_exclude: bool, output_format: str, exit_zero: bool,
                exit_non_zero_on_fix: bool, quiet: bool) -> int:
    """Lint stdin as the file ``path``. With --fix the (fixed) source goes to stdout, and the
    findings that remain to stderr; with --diff, the diff to stdout."""
    data = sys.stdin.buffer.read()
    settings = resolver.for_path(path)
    stdout = sys.stdout.buffer
    if force_exclude and path != "-" and settings.excluded(path):
        if fix:
            stdout.write(data)
        return 0
    options = options_for(settings, path, {".ipynb": lint_notebook}, fix=fix or diff, ignore_noqa=ignore_noqa,
                          unsafe_fixes=unsafe)
    result, new_data = lint_buffer(data, path, options)
    for message in result.errors:
        _echo(f"poslint: error: {message}", err=True)
    for message in result.internal_errors:
        _echo(f"poslint: internal error: {message}", err=True)
    failed = bool(result.errors or result.internal_errors)
    report = Report(sorted(result.diagnostics, key=lambda d: d.sort_key), lambda d: applicable(d.fix, options.unsafe_fixes),
                    {path: result.source_map} if result.source_map is not None else {})
    if diff:
        _echo(result.diff, nl=False)
    elif fix:
        stdout.write(new_data if new_data is not None else data)
        stdout.flush()
        if not fix_only:
            _echo(FORMATTERS["concise"](report), err=True, nl=False)
    else:
        _echo(FORMATTERS[output_format](report), nl=False)
    if not quiet and not fix_only:
        for line in _summary(report.diagnostics, result.fixed, diff, fix, lambda d: options.unsafe_fixes, failed):
            _echo(line, err=True)
    if failed:
        return 2
    if exit_non_zero_on_fix and result.fixed and not diff:
        return 1
    if exit_zero or fix_only:
        return 0
    if diff:
        return 1 if result.diff else 0
    return 1 if report.diagnostics else 0


def _settings_text(path: str, resolver: Resolver, stdin_filename: Optional[str]) -> str:
    """``--show-settings``: what applies to ``path``."""
    settings = resolver.for_path(path)
    target = stdin_filename or path
    ignored = sorted(settings.codes - settings.file_codes(target)) if not os.path.isdir(target) else []
    rows = [
        ("file", target),
        ("configuration", str(settings.path) if settings.path else "(none: defaults)"),
        ("extends", ", ".join(str(p) for p in settings.chain[:-1]) if len(settings.chain) > 1 else "(nothing)"),
        ("project root", str(settings.root)),
        ("rules enabled", ", ".join(sorted(settings.codes)) or "(none)"),
        ("per-file-ignored here", ", ".join(ignored) or "(none)"),
        ("per-file-ignores", "; ".join(f"{glob} (from {base}): {', '.join(sorted(codes))}"
                                       for glob, base, codes in settings.per_file_ignores) or "(none)"),
        ("excludes", ", ".join(glob for glob, _ in settings.excludes) or "(none)"),
        ("respect-gitignore", str(settings.respect_gitignore).lower()),
        ("unsafe-fixes", str(settings.unsafe_fixes).lower()),
        ("unfixable", ", ".join(sorted(settings.unfixable)) or "(none)"),
        ("assume-tf32", str(settings.assume_tf32).lower()),
        ("follow-imports", str(settings.follow_imports).lower()),
        ("src", ", ".join(settings.src) or "(none)"),
    ]
    width = max(len(name) for name, _ in rows)
    return "".join(f"{name:<{width}}  {value}\n" for name, value in rows)


def _use_color(choice: str, output_file: Optional[str]) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return output_file is None and sys.stdout.isatty()


def _write_output(text: str, output_file: Optional[str], color: bool) -> bool:
    """Write the findings; False if ``--output-file`` cannot be written (reported)."""
    if not output_file:
        try:
            _echo(text, nl=False, color=color)
            sys.stdout.flush()
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            _echo(f"poslint: error: cannot write to stdout: {exc.strerror or exc}", err=True)
            _drop_stdout()
            return False
        return True
    try:
        with open(output_file, "wb") as handle:
            handle.write(_safe_bytes(text))
    except OSError as exc:
        _echo(f"poslint: error: {output_file}: cannot write: {exc.strerror or exc}", err=True)
        return False
    return True


def _drop_stdout() -> None:
    """After a failed write to stdout: send what is left in its buffer to /dev/null, so that
    Python's flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _lint_all(files: Sequence[str], options: LintOptions, jobs: int, cache_dir: Optional[str],
              quiet: bool) -> List[FileResult]:
    """Lint ``files`` with the cache in ``cache_dir`` (None: no cache) over ``jobs`` processes."""
    from poslint.engine.cache import Cache
    from poslint.engine.parallel import lint_files, tuned_gc

    def warn(message: str) -> None:
        if not quiet:
            _echo(f"poslint: warning: {message}", err=True)

    with tuned_gc():
        cache = Cache(cache_dir, warn) if cache_dir is not None and files else None
        return lint_files(files, options, jobs, cache, warn)


def _problems(n: int) -> str:
    return f"{n} problem" if n == 1 else f"{n} problems"


def _summary(remaining: Sequence[Diagnostic], fixed: int, diff: bool, fix: bool,
             unsafe_of: Callable[[Diagnostic], bool], failed: bool) -> List[str]:
    hidden = sum(1 for d in remaining if d.fix is not None and not applicable(d.fix, unsafe_of(d)))
    if diff:
        more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
        return [f"Would fix {_problems(fixed)}{more}."]
    lines = []
    if fix and fixed:
        lines.append(f"Fixed {_problems(fixed)}.")
    if remaining:
        fixable = sum(1 for d in remaining if applicable(d.fix, unsafe_of(d)))
        lines.append(f"Found {_problems(len(remaining))} ({fixable} fixable with --fix, {hidden} with --unsafe-fixes).")
        lines.append(f"Run `poslint rule {min(d.code for d in remaining)}` (or any code above) for why it matters "
                     "and what to write instead.")
    elif not lines and not failed:
        lines.append("All checks passed!")
    return lines


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule: code, name and fix availability.")
def rule(code: Optional[str], show_all: bool) -> None:
    """Explain the rule CODE, or list all rules with --all (`poslint explain` is the same)."""
    ctx = click.get_current_context()
    rules = all_rules()
    if show_all == (code is not None):
        raise click.UsageError("give either a rule CODE or --all", ctx)
    if show_all:
        width = max(len(r.name) for r in rules.values())
        for rule_code, rule_cls in rules.items():
            click.echo(f"{rule_code}  {rule_cls.name:<{width}}  fix: {rule_cls.fix_availability}")
        return
    if code not in rules:
        click.echo(f"poslint: error: unknown rule code {code!r} (see `poslint rule --all`)", err=True)
        ctx.exit(2)
    click.echo(rules[code].documentation(), nl=False)


@main.command("server")
def server() -> None:
    """Run the language server (LSP) on stdin/stdout, for editors (see docs/editors.md).

    Needs the `lsp` extra: pip install 'poslint[lsp]'.
    """
    try:
        from poslint.edge.server import serve
    except ImportError as exc:
        _echo(f"poslint: error: the language server needs pygls ({exc}); install it with "
              f"pip install 'poslint[lsp]'", err=True)
        click.get_current_context().exit(2)
    serve()


# --- Subcommands defined in other modules are registered below this line. ---
# Add each as `from poslint.<module> import <command>` then `main.add_command(<command>)`;
# the group routes its name to it (see _DefaultToCheck.parse_args).
from poslint.edge.verify_cli import verify  # noqa: E402

main.add_command(verify)
main.add_command(rule, "explain")  # ruff's name for it
