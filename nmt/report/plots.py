"""Learning-curve figures for the report (matplotlib Agg, no pyplot global state).

The PNG is written without a ``Software`` entry or any timestamp, so the same inputs (and the
same matplotlib/freetype versions) give the same bytes.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from matplotlib import ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..base.atomic import write_bytes_atomic
from ..records.metrics import read_metrics


def _num(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def curve_points(records: list[dict]) -> list[tuple[float, float]]:
    """(updates, dev_ppl) points of a metrics file, skipping epochs without usable values."""
    pts = []
    for r in records:
        x, y = _num(r.get("updates")), _num(r.get("dev_ppl"))
        if x is not None and y is not None and y > 0:
            pts.append((x, y))
    return pts


def learning_curves(metrics_files: dict[str, Path], out_png: Path, title: str) -> None:
    """Plot dev perplexity vs. updates, one line per system (legend label = system id).

    Systems are drawn in the order of ``metrics_files``; the y axis is logarithmic. Raises
    ``ValueError`` when no file has a single usable (updates, dev_ppl) point.
    """
    series = []
    for system, path in metrics_files.items():
        pts = curve_points(read_metrics(path))
        if pts:
            series.append((system, pts))
    if not series:
        raise ValueError(f"no (updates, dev_ppl) points in any of: {', '.join(str(p) for p in metrics_files.values())}")

    fig = Figure(figsize=(8.0, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    markers = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
    for i, (system, pts) in enumerate(series):
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        ax.plot(xs, ys, label=system, color=f"C{i % 10}", marker=markers[i % len(markers)], markersize=4, linewidth=1.5)
    ax.set_yscale("log")
    # plain numbers (20, 50, 100) instead of 2x10^1 on the log axis
    ax.yaxis.set_major_formatter(ticker.LogFormatter(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.4)))
    ax.tick_params(axis="y", which="minor", labelsize=8)
    ax.set_xlabel("updates")
    ax.set_ylabel("dev perplexity (log scale)")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.15)
    ax.legend(fontsize=8, loc="upper right", frameon=True)
    fig.tight_layout()

    save_png(fig, Path(out_png))


def save_png(fig: Figure, path: Path) -> None:
    """Write a figure as PNG atomically, without a Software entry or timestamp (same inputs, same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    write_bytes_atomic(path, buf.getvalue())
