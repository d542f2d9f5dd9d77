"""The ``poslint`` command line.

``poslint [OPTIONS] [PATHS]...`` is short for ``poslint check [OPTIONS] [PATHS]...``: any first
argument that is not a subcommand name (or a top-level ``--help``/``-h``/``--version``) goes to
``check``. To lint a directory whose name is a subcommand, write ``poslint check rule`` or
``poslint ./rule``.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click

from poslint import __version__
from poslint.core.diagnostics import Diagnostic
from poslint.edge.output import FORMATTERS, Report, fixes_applied, fixes_available, statistics
from poslint.engine.cache import DEFAULT_DIR as DEFAULT_CACHE
from poslint.engine.config import (
    Config,
    ConfigError,
    Selection,
    codes_list,
    find_config,
    format_label,
    load_config,
    resolve_codes,
)
from poslint.engine.files import DEFAULT_EXCLUDES, discover
from poslint.engine.linter import FileResult, LintOptions
from poslint.fix.fixer import applicable
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


def _safe_bytes(text: str) -> bytes:
    """``text`` in UTF-8, where a file name's bytes that are not UTF-8 (which Python keeps as lone
    surrogates) are written back as they were."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _echo(message: str, err: bool = False, nl: bool = True) -> None:
    """``click.echo``, except that text the stream cannot encode (a file name that is not UTF-8,
    a name the terminal's encoding lacks) is written as UTF-8 bytes instead of failing the run."""
    try:
        click.echo(message, err=err, nl=nl)
    except UnicodeEncodeError:
        click.echo(_safe_bytes(message), err=err, nl=nl)


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
@click.option("--diff", is_flag=True,
              help="Print the fixes as unified diffs instead of writing them; exit 1 if there are any.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even if findings remain (errors still exit 2).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Enable only these rules (codes, prefixes such as POS1, or ALL; comma-separated, "
                   "repeatable). Replaces the config's selection.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Enable these rules as well.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Disable these rules.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), metavar="PATH",
              help="Read [tool.poslint] from this TOML file instead of the nearest pyproject.toml.")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Skip files and directories matching GLOB (repeatable). Replaces the default "
                   "excludes and the config's `exclude`.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB",
              help="Skip files and directories matching GLOB, on top of the other excludes (repeatable).")
@click.option("--force-exclude", is_flag=True,
              help="Apply the excludes to paths given on the command line too (for pre-commit).")
@click.option("--ignore-noqa", is_flag=True, help="Report findings even on lines with `# noqa` comments.")
@click.option("--output-format", type=click.Choice(list(FORMATTERS)), default="concise", show_default=True,
              envvar="POSLINT_OUTPUT_FORMAT", show_envvar=True,
              help="How findings are printed: concise (path:line:col: CODE message), full (with a code frame "
                   "and the fix as a diff), json, github (Actions annotations), sarif (SARIF 2.1.0) or pylint.")
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True), metavar="PATH",
              help="Write the findings (or the diffs, with --diff) to PATH instead of stdout.")
@click.option("--statistics", "statistics_", is_flag=True,
              help="Print the number of findings per rule instead of the findings themselves.")
@click.option("--show-fixes", is_flag=True,
              help="With --fix, list the fixes made per file and rule; otherwise list the fixes available "
                   "for the remaining findings (on stderr).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings and errors only: no summary and no notes.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, metavar="N",
              help="Lint with N processes (default 0: one per CPU core). Small runs stay in one process.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache of results.")
@click.option("--cache-dir", type=click.Path(), metavar="DIR", envvar="POSLINT_CACHE_DIR",
              show_envvar=True,
              help="Keep the cache of results in DIR (default: .poslint_cache in the project root, the directory "
                   "of the configuration file, or else the current directory).")
def check(paths: Tuple[str, ...], fix: bool, unsafe_fixes: Optional[bool], diff: bool, exit_zero: bool,
          select: Tuple[str, ...], extend_select: Tuple[str, ...], ignore: Tuple[str, ...],
          config_path: Optional[str], exclude: Tuple[str, ...], extend_exclude: Tuple[str, ...],
          force_exclude: bool, ignore_noqa: bool, output_format: str, output_file: Optional[str],
          statistics_: bool, show_fixes: bool, quiet: bool, jobs: int, no_cache: bool,
          cache_dir: Optional[str]) -> None:
    """Lint PATHS (files and directories, recursively; default: the current directory).

    Linting only reads the source: it never imports or runs it (unlike `poslint verify`).
    """
    ctx = click.get_current_context()
    paths = paths or (".",)
    try:
        config = load_config(Path(config_path)) if config_path else _found_config(paths)
        cli_selection = Selection(codes_list(list(select)) or None, codes_list(list(extend_select)),
                                  codes_list(list(ignore)))
        layers = [(cli_selection, "--{}")]
        if config.path is not None:
            layers.insert(0, (config.selection, format_label(f"{config.path}: [tool.poslint]")))
        codes = resolve_codes(layers)
    except ConfigError as exc:
        _echo(f"poslint: error: {exc}", err=True)
        ctx.exit(2)

    excludes = list(exclude) if exclude else list(config.exclude if config.exclude is not None else DEFAULT_EXCLUDES)
    excludes += list(config.extend_exclude) + list(extend_exclude)
    unsafe = unsafe_fixes if unsafe_fixes is not None else bool(config.unsafe_fixes)
    options = LintOptions(codes=frozenset(codes), config=config, ignore_noqa=ignore_noqa,
                          fix=fix or diff, write=fix and not diff, unsafe_fixes=unsafe,
                          handlers={".ipynb": lint_notebook})

    found = discover(paths, excludes, config.root, force_exclude)
    failed = bool(found.errors)
    for message in found.errors:
        _echo(f"poslint: error: {message}", err=True)
    if not quiet:
        for message in found.notes:
            _echo(f"poslint: note: {message}", err=True)

    results = _lint_all(found.files, options, jobs, None if no_cache else (cache_dir or str(config.root / DEFAULT_CACHE)),
                        quiet)
    for result in results:
        for message in result.errors:
            _echo(f"poslint: error: {message}", err=True)
        failed = failed or bool(result.errors)

    internal = [m for r in results for m in r.internal_errors]
    for message in internal:
        _echo(f"poslint: internal error: {message}", err=True)
    failed = failed or bool(internal)

    remaining = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)
    fixed = sum(r.fixed for r in results)
    report = Report(remaining, lambda d: applicable(d.fix, unsafe),
                    {r.path: r.source_map for r in results if r.source_map is not None})
    if diff:
        text = "".join(r.diff for r in results)
    elif statistics_:
        text = statistics(report, output_format)
    else:
        text = FORMATTERS[output_format](report)
    if output_file:
        try:
            with open(output_file, "wb") as handle:
                handle.write(_safe_bytes(text))
        except OSError as exc:
            _echo(f"poslint: error: {output_file}: cannot write: {exc.strerror or exc}", err=True)
            failed = True
    else:
        _echo(text, nl=False)
    if show_fixes and not diff:
        shown = fixes_applied({r.path: r.fixed_codes for r in results}) if fix else fixes_available(report)
        if shown:
            _echo("Fixed:" if fix else "Fixes available:", err=True)
        for line in shown:
            _echo(line, err=True)
    # Nothing to lint (say, pre-commit passed only excluded files) is quiet: no summary at all.
    if not quiet and (found.files or failed):
        for line in _summary(remaining, fixed, diff, fix, unsafe, failed):
            _echo(line, err=True)

    if failed:
        ctx.exit(2)
    if exit_zero:
        ctx.exit(0)
    if diff:
        ctx.exit(1 if any(r.diff for r in results) else 0)
    ctx.exit(1 if remaining else 0)


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


def _found_config(paths: Sequence[str]) -> Config:
    path = find_config(paths)
    return load_config(path) if path is not None else Config()


def _problems(n: int) -> str:
    return f"{n} problem" if n == 1 else f"{n} problems"


def _summary(remaining: Sequence[Diagnostic], fixed: int, diff: bool, fix: bool, unsafe: bool,
             failed: bool) -> List[str]:
    hidden = sum(1 for d in remaining if d.fix is not None and not applicable(d.fix, unsafe))
    if diff:
        more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
        return [f"Would fix {_problems(fixed)}{more}."]
    lines = []
    if fix and fixed:
        lines.append(f"Fixed {_problems(fixed)}.")
    if remaining:
        fixable = sum(1 for d in remaining if applicable(d.fix, unsafe))
        lines.append(f"Found {_problems(len(remaining))} ({fixable} fixable with --fix, {hidden} with --unsafe-fixes).")
    elif not lines and not failed:
        lines.append("All checks passed!")
    return lines


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule: code, name and fix availability.")
def rule(code: Optional[str], show_all: bool) -> None:
    """Explain the rule CODE, or list all rules with --all."""
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


# --- Subcommands defined in other modules are registered below this line. ---
# Add each as `from poslint.<module> import <command>` then `main.add_command(<command>)`;
# the group routes its name to it (see _DefaultToCheck.parse_args).
from poslint.edge.verify_cli import verify  # noqa: E402

main.add_command(verify)
