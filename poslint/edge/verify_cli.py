"""`poslint verify TARGET`: run a module in 16-bit scenarios against its float64 self.

torch (and the user's code) are imported only when the command runs, never in lint mode.
"""

from __future__ import annotations

import warnings
from typing import Optional, Tuple

import click

TORCH_MISSING = "poslint verify needs torch: pip install 'poslint[verify]'"


def _dotted(name: str) -> str:
    """`package.module.Class` -> `package.module:Class`; other spellings are kept."""
    if ":" in name or name.endswith(".py") or "." not in name:
        return name
    module, _, attr = name.rpartition(".")
    return f"{module}:{attr}"


def _fail(message: str) -> None:
    click.echo(f"poslint: error: {message}", err=True)
    click.get_current_context().exit(2)


@click.command("verify")
@click.argument("target")
@click.option("--seq-len", type=click.IntRange(min=2), default=8192, show_default=True,
              help="Number of positions (context length) to run.")
@click.option("--scenario", "scenarios", multiple=True, metavar="NAME",
              help="Run only this scenario (repeatable): bf16, fp16, autocast-cpu, "
                   "autocast-cuda-emulated; bf16-default (built and run under a bfloat16 "
                   "default dtype), tf32-emulated (float32 matmuls with TF32 inputs, as with "
                   "allow_tf32) and fp32 (float32 alone, for long contexts) only on request. "
                   "Default: the first four.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of angle error against position per scenario (needs matplotlib).")
@click.option("--original", metavar="TARGET", default=None,
              help="The same target before a fix: a scenario fails when its output dtypes or devices "
                   "differ from the original's.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="Constructor argument (repeatable) when TARGET is a class or an ALiBi function, "
                   "e.g. --arg dim=128 --arg max_position_embeddings=2048 --arg base=10000; with "
                   "--config-class, arguments the class does not take go to the config.")
@click.option("--config-class", metavar="CLASS", default=None,
              help="For a rotary class built from a config: the config class, as TARGET is named "
                   "(transformers.LlamaConfig, or path/to/file.py:MyConfig), built with the --arg values.")
def verify(target: str, seq_len: int, scenarios: Tuple[str, ...], plot_path: Optional[str],
           original: Optional[str], args: Tuple[str, ...], config_class: Optional[str]) -> None:
    """Run the rotary or ALiBi module built by TARGET against a float64 reference.

    WARNING: this IMPORTS AND RUNS the code named by TARGET, unlike `poslint check`, which
    only reads source. Use it on code you trust.

    TARGET is path/to/file.py:NAME or package.module:NAME (NAME defaults to poslint_factory).
    NAME is one of:

    \b
    - a factory: takes seq_len and returns (module, make_inputs) or (module, make_inputs,
      options); make_inputs(dtype) returns the positional arguments of module(*args), and
      options may set kind ("rotary" or "alibi") and position_axis (default -2);
    - a rotary nn.Module class, built from --arg values (dim defaults to 128) or, if it takes
      a config, from --config-class with the --arg values; forward gets an activation
      [1, 1, seq_len, dim], position_ids and seq_len as its signature asks;
    - an ALiBi function taking a mask, a head count and optionally dtype (such as
      build_alibi_tensor(attention_mask, num_heads, dtype)); num_heads defaults to 8.

    The module runs converted to bf16, to fp16, in float32 under CPU autocast(bf16), and under
    CPU autocast with CUDA's list of lowered ops emulated (einsum included). One row per
    scenario: output dtypes, max abs error, max angle error and collisions (rotary), or distinct
    values among the 64 keys nearest the diagonal and error relative to the diagonal (ALiBi).

    Exit status: 0 when every scenario passes, 1 when any fails, 2 when TARGET cannot be loaded,
    its factory fails, or torch (or matplotlib for --plot) is missing.
    """
    with warnings.catch_warnings():
        # A torch wheel without numpy warns at import; verify never needs numpy.
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        try:
            import torch  # noqa: F401  (probe only; the runtime package imports it for real)
        except ImportError:
            _fail(TORCH_MISSING)
    from poslint.runtime import EXTRA_SCENARIOS, SCENARIOS, VerifyError, load_factory
    from poslint.runtime import verify as run_verify
    from poslint.runtime.auto import is_plain_target, make_factory, parse_args

    unknown = [s for s in scenarios if s not in SCENARIOS + EXTRA_SCENARIOS]
    if unknown:
        _fail(f"unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS + EXTRA_SCENARIOS)}")
    if plot_path is not None:
        from poslint.runtime.plot import require_matplotlib

        try:
            require_matplotlib()
        except ImportError as exc:
            _fail(str(exc))

    def load(name: str):
        found = load_factory(name)
        if is_plain_target(found):
            config = load_factory(_dotted(config_class)) if config_class else None
            return make_factory(found, parse_args(args), config)
        return found

    try:
        factory = load(target)
        before = load(original) if original else None
        result = run_verify(factory, seq_len=seq_len, scenarios=scenarios or SCENARIOS, original=before)
    except VerifyError as exc:
        _fail(str(exc))
    click.echo(f"{target}: {result.kind}, {seq_len} positions, float64 reference")
    click.echo(result.format_table())
    if plot_path is not None:
        from poslint.runtime.plot import plot_angle_error

        drawn = plot_angle_error(result, plot_path, f"{target} ({seq_len} positions)")
        if drawn:
            click.echo(f"wrote {plot_path}")
        else:
            click.echo(f"wrote {plot_path} (no per-position angle errors were captured)")
    click.get_current_context().exit(0 if result.passed else 1)
