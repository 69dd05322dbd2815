"""Speed sections of the report: a measured benchmark file -> a figure and a table.

Each builder reads one JSON file that an `nmt bench ...` command wrote, draws its PNG (deterministic bytes, as the
learning curves) and returns a view for the template: title, what was measured and where, the column headers and
rows of the table, the figure and a caption. Nothing here is typed in except the paper's own claims.
"""
from __future__ import annotations

import json
from pathlib import Path

from markupsafe import Markup
from matplotlib import ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import save_png

ATTENTION_METHODS = ("global", "local-m", "local-p")  # as `nmt bench attention` names them


def attention_speed_view(bench_file: Path, out_dir: Path, shown_path: str) -> dict:
    """Luong et al. section 3.2's cost argument, measured: ms per decoder step against source length."""
    bench = json.loads(Path(bench_file).read_text(encoding="utf-8"))
    rows = bench["rows"]
    lengths = sorted({r["src_len"] for r in rows})
    by = {(r["src_len"], r["method"]): r for r in rows}

    figure = "attention_speed.png"
    fig = Figure(figsize=(8.0, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for i, method in enumerate(ATTENTION_METHODS):
        pts = [(s, by[(s, method)]["context_ms"]) for s in lengths if (s, method) in by]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="os^"[i], color=f"C{i}", label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = ticker.FuncFormatter(lambda value, _pos: f"{value:g}")
    ax.set_xticks(lengths)
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.yaxis.set_major_formatter(plain)
    ax.set_xlabel("source length S (words)")
    ax.set_ylabel("ms per decoder step (log scale)")
    ax.set_title(f"Attention cost per step: weights + context, batch {bench['batch']}, hidden {bench['hidden']}, "
                 f"D = {bench['window']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9)
    fig.tight_layout()
    save_png(fig, Path(out_dir) / figure)

    table_rows = []
    speed = {e["src_len"]: e for e in bench["speedups"]}
    for s in lengths:
        cells = []
        for key in ("context_ms", "layer_ms"):
            for method in ATTENTION_METHODS:
                r = by.get((s, method))
                cells.append(f"{r[key]:.2f}" if r else "\u2013")
        e = speed.get(s, {})
        cells += [f"{e[k]:.1f}x" if k in e else "\u2013" for k in ("local-p_context", "local-p_layer")]
        table_rows.append({"name": f"{s:,}", "cells": cells})
    return {
        "id": "attention-speed",
        "title": "Cost of global vs local attention per decoder step",
        "paper": "Luong, Pham, Manning (2015), section 3.2: local attention costs O(D) per target step, global O(S)",
        "measured": Markup("Measured by <code>nmt bench attention</code> on {}, torch {}, {}; {} score, "
                           "batch {}, hidden {}, window D = {}; median of repeated calls. Raw numbers: "
                           "<code>{}</code>.").format(bench["device"], bench["torch"], bench["date"], bench["score"],
                                                      bench["batch"], bench["hidden"], bench["window"], shown_path),
        "columns": ["S"] + [f"{m} weights+context (ms)" for m in ATTENTION_METHODS]
                   + [f"{m} whole layer (ms)" for m in ATTENTION_METHODS]
                   + ["global / local-p, weights+context", "global / local-p, whole layer"],
        "rows": table_rows,
        "figure": figure,
        "caption": ("Time per decoder step of computing the alignment weights and the context vector c_t (log-log). "
                    "The whole layer adds the attentional state tanh(W_c[c_t; h_t]), the same for every variant. "
                    "Local attention should stay flat as S grows; global attention grows linearly."),
    }
