"""Plot angle error against position for each scenario (needs matplotlib)."""

from __future__ import annotations

from poslint.runtime.verify import VerifyResult

MATPLOTLIB_MISSING = "--plot needs matplotlib, which is not installed: pip install matplotlib"


def require_matplotlib():
    """Import matplotlib with a non-interactive backend; ImportError carries MATPLOTLIB_MISSING."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(MATPLOTLIB_MISSING) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_angle_error(result: VerifyResult, path: str, title: str) -> int:
    """Write the plot to PATH; return how many scenarios had per-position angle errors to draw."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    drawn = 0
    floor = 1e-9
    for s in result.scenarios.values():
        if s.angle_error_by_position is None:
            continue
        values = s.angle_error_by_position.clamp_min(floor).tolist()
        ax.plot(range(len(values)), values, label=s.name, linewidth=0.8)
        drawn += 1
    ax.axhline(result.thresholds.angle_error, color="black", linestyle="--", linewidth=0.8,
               label=f"threshold {result.thresholds.angle_error:g} rad")
    ax.set_yscale("log")
    ax.set_xlabel("position")
    ax.set_ylabel("max angle error vs float64 (rad)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn
