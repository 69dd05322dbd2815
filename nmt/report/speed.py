"""Speed sections of the report: a measured benchmark file -> a figure and a table.

Each builder reads one JSON file that an `nmt bench ...` command wrote, draws its PNGs (deterministic bytes, as the
learning curves) and returns a view for the template: title, the paper's claim, what was measured and where, a
summary of the measurement (or None), the figures with their captions and the tables (column headers and rows).
Nothing here is typed in except the paper's own claims.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from markupsafe import Markup
from matplotlib import colors, patches, ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..records.benchmarks import read_benchmark
from .plots import save_png

ATTENTION_METHODS = ("global", "local-m", "local-p")  # as `nmt bench attention` names them
ATTENTION_FIGURES = ("attention_speed.png",)


def _plain_log_axis(axis) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, ... in plain numbers, its minor ticks unlabelled: matplotlib's default
    labels the minor ticks of a short log range too (2x10^1, 3x10^1, ...), over each other and the major ones."""
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _pos: f"{value:g}"))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs="auto"))
    axis.set_minor_formatter(ticker.NullFormatter())


def attention_speed_view(bench_file: Path, out_dir: Path, shown_path: str) -> dict:
    """Luong et al. section 3.2's cost argument, measured: ms per decoder step against source length."""
    bench = read_benchmark(bench_file, "attention")
    rows = bench["rows"]
    lengths = sorted({r["src_len"] for r in rows})
    by = {(r["src_len"], r["method"]): r for r in rows}

    (figure,) = ATTENTION_FIGURES
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
    _plain_log_axis(ax.yaxis)
    ax.set_xlabel("source length S (words)")
    ax.set_ylabel("ms per decoder step (log scale)")
    ax.set_title(
        f"Attention cost per step: weights + context, batch {bench['batch']}, hidden {bench['hidden']}, "
        f"D = {bench['window']}",
        fontsize=10,
    )
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
        "measured": Markup(
            "Measured by <code>nmt bench attention</code> on {}, torch {}, {}; {} score, "
            "batch {}, hidden {}, window D = {}; median of repeated calls. Raw numbers: "
            "<code>{}</code>."
        ).format(
            bench["device"],
            bench["torch"],
            bench["date"],
            bench["score"],
            bench["batch"],
            bench["hidden"],
            bench["window"],
            shown_path,
        ),
        "summary": None,
        "figures": [
            {
                "file": figure,
                "alt": "ms per decoder step against source length, global vs local attention",
                "width": 800,
                "height": 450,
                "caption": (
                    "Time per decoder step of computing the alignment weights and the context vector c_t "
                    "(log-log). The whole layer adds the attentional state tanh(W_c[c_t; h_t]), the same for "
                    "every variant. Local attention should stay flat as S grows; global attention grows "
                    "linearly."
                ),
            }
        ],
        "tables": [
            {
                "caption": None,
                "columns": ["S"]
                + [f"{m} weights+context (ms)" for m in ATTENTION_METHODS]
                + [f"{m} whole layer (ms)" for m in ATTENTION_METHODS]
                + ["global / local-p, weights+context", "global / local-p, whole layer"],
                "rows": table_rows,
            }
        ],
    }


MONOTONIC_FIGURES = ("monotonic_speedup.png", "monotonic_decoding.png")
PAPER_RANGE = 128  # Raffel et al. varied T and U from 4 to 128


def _times(value: float) -> str:
    """A speed-up as the heat map and tables print it: 2 significant digits up to 100x."""
    return f"{value:.1f}x" if value < 10 else f"{value:.0f}x"


def _speedup_heatmap(cells: list[dict], inputs: list[int], outputs: list[int], dim: int, path: Path) -> None:
    """Softmax time / hard monotonic time over the T x U grid, each cell's number written in it; the cells of the
    paper's range (T, U <= 128) framed."""
    by = {(c["T"], c["U"]): c["speedup"] for c in cells}
    grid = np.full((len(inputs), len(outputs)), np.nan)
    for a, t in enumerate(inputs):
        for b, u in enumerate(outputs):
            if (t, u) in by:
                grid[a, b] = by[(t, u)]
    fig = Figure(figsize=(7.5, 6.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    finite = grid[np.isfinite(grid)]
    top = max(2.0, float(np.abs(np.log10(finite)).max()) if finite.size else 1.0)
    norm = colors.TwoSlopeNorm(vmin=-top, vcenter=0.0, vmax=top)  # centred on 1x: hard faster is red
    image = ax.imshow(np.log10(grid), cmap="RdBu_r", norm=norm, origin="lower", aspect="auto")
    for a in range(len(inputs)):
        for b in range(len(outputs)):
            if np.isfinite(grid[a, b]):
                strong = abs(np.log10(grid[a, b])) > 0.6 * top
                ax.text(
                    b, a, _times(grid[a, b]), ha="center", va="center", fontsize=8, color="white" if strong else "black"
                )
    in_range = (sum(t <= PAPER_RANGE for t in inputs), sum(u <= PAPER_RANGE for u in outputs))
    if all(in_range) and in_range != (len(inputs), len(outputs)):
        ax.add_patch(
            patches.Rectangle(
                (-0.5, -0.5),
                in_range[1],
                in_range[0],
                fill=False,
                linewidth=1.5,
                edgecolor="black",
                linestyle="--",
                label="the paper's range (4..128)",
            )
        )
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), fontsize=8, frameon=False)
    ax.set_xticks(range(len(outputs)), [str(u) for u in outputs])
    ax.set_yticks(range(len(inputs)), [str(t) for t in inputs])
    ax.set_xlabel("output length U (decoder steps)")
    ax.set_ylabel("input length T (memory entries)")
    ax.set_title(f"Speed-up of hard monotonic over softmax attention, all U contexts, d = {dim}", fontsize=10)
    bar = fig.colorbar(image, ax=ax)
    ticks = [v for v in (-3, -2, -1, 0, 1, 2, 3) if -top <= v <= top]
    bar.set_ticks(ticks, labels=[f"{10.0**v:g}x" for v in ticks])
    bar.set_label("softmax time / hard monotonic time (log scale)")
    fig.tight_layout()
    save_png(fig, path)


def _decoding_plot(decoding: dict, path: Path) -> None:
    """Whole greedy decoding against source length, one line per decoder: time per sentence, time per output word,
    and (with a baseline decoder) the attention's own time per output word: the decoder's minus the baseline's."""
    rows, baseline = decoding["rows"], decoding["baseline"]
    lengths = sorted({r["length"] for r in rows})
    by = {(r["length"], r["method"]): r["ms"] for r in rows}
    fig = Figure(figsize=(10.5, 3.8), dpi=100)
    FigureCanvasAgg(fig)
    total, per_word, own = (fig.add_subplot(1, 3, k) for k in (1, 2, 3))
    plain = ticker.FuncFormatter(lambda value, _pos: f"{value:g}")
    for i, method in enumerate(decoding["methods"]):
        pts = [(n, by[(n, method)]) for n in lengths if (n, method) in by]
        style = dict(marker="os^"[i % 3], color=f"C{i}", label=method)
        if method == baseline:
            style.update(color="0.5", linestyle="--")
        total.plot([n for n, _ in pts], [ms for _, ms in pts], **style)
        per_word.plot([n for n, _ in pts], [ms / n for n, ms in pts], **style)
        if baseline is not None and method != baseline:
            extra = [(n, (ms - by[(n, baseline)]) / n) for n, ms in pts if (n, baseline) in by]
            own.plot([n for n, _ in extra], [v for _, v in extra], **style)
    for ax in (total, per_word, own):
        ax.set_xscale("log")
        ax.set_xticks(lengths)
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlabel("source length L = output length U")
        ax.grid(True, which="both", alpha=0.3)
    total.set_yscale("log")
    _plain_log_axis(total.yaxis)
    total.set_ylabel("ms per sentence (log scale)")
    total.set_title("whole greedy decoding", fontsize=10)
    per_word.set_ylim(bottom=0)
    per_word.set_ylabel("ms per output word")
    per_word.set_title("per output word (flat: linear time)", fontsize=10)
    per_word.legend(fontsize=8)
    own.axhline(0.0, color="0.5", linewidth=0.8)
    own.set_ylabel(f"ms per output word over {baseline}" if baseline else "no baseline measured")
    own.set_title("the attention's own cost per word", fontsize=10)
    fig.tight_layout()
    save_png(fig, path)


def _monotonic_summary(cells: list[dict], decoding: dict) -> str | None:
    """The measured speed-up at T = U = 128 (the issue's acceptance point) and its range, in the paper's range of
    lengths and over the whole grid; whole decoding at the longest L and how its time grew up to it."""
    parts = []
    at = next((c for c in cells if c["T"] == c["U"] == PAPER_RANGE), None)
    if at:
        parts.append(
            f"at T = U = {PAPER_RANGE} hard monotonic attention was {_times(at['speedup'])} faster "
            f"({at['softmax_ms']:.3f} ms vs {at['hard_ms']:.3f} ms for all {PAPER_RANGE} contexts)"
        )
    paper = [c["speedup"] for c in cells if c["T"] <= PAPER_RANGE and c["U"] <= PAPER_RANGE]
    if paper:
        parts.append(f"over T, U <= {PAPER_RANGE}: {_times(min(paper))} to {_times(max(paper))}")
    if cells:
        every = [c["speedup"] for c in cells]
        parts.append(f"over the whole grid: {_times(min(every))} to {_times(max(every))}")
    rows = decoding["rows"]
    if rows:
        top = max(r["length"] for r in rows)
        whole = ", ".join(f"{r['method']} {r['ms']:.0f} ms" for r in rows if r["length"] == top)
        growths = [(m, decoding["growth"][m]) for m in decoding["methods"] if "ratio" in decoding["growth"].get(m, {})]
        grew = ", ".join(f"{m} {g['ratio']:.2f}x (exponent {g['exponent']:.2f})" for m, g in growths)
        text = f"whole greedy decoding at L = U = {top:,}: {whole}"
        if growths:
            some = growths[0][1]
            text += f"; from L = {some['from_length']:,} to {some['to_length']:,} the time grew: {grew}"
        parts.append(text)
    return "Ours: " + "; ".join(parts) + "." if parts else None


def _growth_row(name: str, g: dict) -> dict:
    dash = "\u2013"
    return {
        "name": name,
        "cells": [
            f"{g['slope_ms_per_word']:.3f}" if "slope_ms_per_word" in g else dash,
            f"{g['r2']:.4f}" if "r2" in g else dash,
            f"{g['to_length']:,} / {g['from_length']:,}" if "ratio" in g else dash,
            f"{g['ratio']:.2f}" if "ratio" in g else dash,
            f"{g['exponent']:.2f}" if "exponent" in g else dash,
        ],
    }


def monotonic_speed_view(bench_file: Path, out_dir: Path, shown_path: str) -> dict:
    """Raffel et al. (2017) appendix F, measured: the speed-up of hard monotonic over softmax attention over a
    T x U grid, and whole greedy decoding time against source length with this project's models."""
    bench = read_benchmark(bench_file, "monotonic")
    contexts, decoding = bench["contexts"], bench["decoding"]
    cells = contexts["cells"]
    inputs, outputs = sorted({c["T"] for c in cells}), sorted({c["U"] for c in cells})
    heatmap, curves = MONOTONIC_FIGURES
    _speedup_heatmap(cells, inputs, outputs, contexts["dim"], Path(out_dir) / heatmap)
    _decoding_plot(decoding, Path(out_dir) / curves)

    dash = "\u2013"
    by = {(c["T"], c["U"]): c for c in cells}
    grid_rows = [
        {"name": f"{t:,}", "cells": [_times(by[(t, u)]["speedup"]) if (t, u) in by else dash for u in outputs]}
        for t in inputs
    ]
    methods, baseline = decoding["methods"], decoding["baseline"]
    attending = [m for m in methods if m != baseline]
    pair = ("softmax", "hard-monotonic")  # as `nmt bench monotonic` names its decoders
    times = {(r["length"], r["method"]): r for r in decoding["rows"]}
    decode_rows = []
    for length in sorted({r["length"] for r in decoding["rows"]}):
        row = [times.get((length, m)) for m in methods]
        cells_ms = [f"{r['ms']:.1f}" if r else dash for r in row]
        cells_word = [f"{r['ms_per_word']:.3f}" if r else dash for r in row]
        ratio = (
            _times(times[(length, pair[0])]["ms"] / times[(length, pair[1])]["ms"])
            if all((length, m) in times for m in pair)
            else dash
        )
        energies = [f"{times[(length, m)]['energies']:,}" if (length, m) in times else dash for m in attending]
        decode_rows.append({"name": f"{length:,}", "cells": cells_ms + cells_word + [ratio] + energies})
    growth_rows = [_growth_row(m, decoding["growth"].get(m, {})) for m in methods]
    growth_rows += [
        _growth_row(f"{m} minus {baseline}", decoding["attention_growth"][m])
        for m in methods
        if m in decoding["attention_growth"]
    ]
    blas = bench["blas_threads"] if bench["blas_threads"] is not None else "unknown"
    hard = decoding["models"].get(pair[1], {})
    return {
        "id": "monotonic-speed",
        "title": "Speed of hard monotonic vs softmax attention at test time",
        "paper": (
            "Raffel, Luong, Liu, Weiss, Eck (2017), appendix F: Raffel et al. measured hard monotonic "
            "attention 4x-40x faster than softmax attention; C++/Eigen, dot energy, d = 256, lengths 4..128 "
            "(one thread, memory and decoder states uniform in [-1, 1]); the largest gains for short inputs "
            "and long outputs"
        ),
        "measured": Markup(
            "Measured by <code>nmt bench monotonic</code> on {}, torch {}, numpy {}, {}; {} torch "
            "thread(s), {} BLAS thread(s). Contexts: numpy float32 kernels of both mechanisms on the "
            "same primitives (one matrix-vector product per softmax step, one dot product per hard "
            "monotonic energy), dot energy, d = {}, random memory and states uniform in [-1, 1], "
            "median of samples taken in turn, about {} s per method and cell. Decoding: this "
            "project's models ({}-layer LSTMs, {} units, vocabulary {}, random weights, batch 1), "
            "median of {} greedy decodings taken in turn. Raw numbers: <code>{}</code>."
        ).format(
            bench["device"],
            bench["torch"],
            bench["numpy"],
            bench["date"],
            bench["threads"],
            blas,
            contexts["dim"],
            contexts["min_time_s"],
            decoding["layers"],
            decoding["hidden"],
            decoding["vocab"],
            decoding["repeats"],
            shown_path,
        ),
        "summary": _monotonic_summary(cells, decoding),
        "figures": [
            {
                "file": heatmap,
                "alt": "speed-up of hard monotonic over softmax attention by input and output length",
                "width": 750,
                "height": 600,
                "caption": (
                    "Time to compute all U context vectors with softmax attention divided by the time with "
                    "hard monotonic attention (Raffel et al.'s Figure 8). With random states about half of the "
                    "energies are >= 0, so the hard process' pointer advances about one entry per output step; "
                    "when the input is shorter than the output it runs out of memory and the remaining "
                    "contexts are 0 and free. Numpy's per-call cost is paid per energy by the hard process "
                    "and per step by softmax, so these ratios are lower than a compiled implementation's."
                ),
            },
            {
                "file": curves,
                "alt": "greedy decoding time against source length, softmax vs hard monotonic",
                "width": 1050,
                "height": 380,
                "caption": (
                    "Whole greedy decoding (encode, then exactly U = L steps) with this project's models. "
                    "Softmax attention's cost per sentence grows as L^2, the hard process' as L; the LSTM "
                    "steps and the output layer grow as L for every decoder. Right: each decoder's time "
                    f"minus that of the decoder without attention ({baseline}), per output word: the "
                    "attention's own cost (its input feeding included). The hard monotonic model's energy "
                    f"bias r starts at {hard.get('energy_bias', 'the preset value')}, so that with random "
                    "weights it attends at every step."
                ),
            },
        ],
        "tables": [
            {
                "caption": "Speed-up (softmax time / hard monotonic time); rows: input length T, columns: output "
                "length U",
                "columns": ["T \\ U"] + [f"{u:,}" for u in outputs],
                "rows": grid_rows,
            },
            {
                "caption": "Whole greedy decoding by source length L (= output length U); energies: computed in one "
                "decoding (softmax: every source word at every step; hard: counted)",
                "columns": ["L"]
                + [f"{m} (ms)" for m in methods]
                + [f"{m} (ms per word)" for m in methods]
                + [f"{pair[0]} / {pair[1]}"]
                + [f"{m} energies" for m in attending],
                "rows": decode_rows,
            },
            {
                "caption": "How decoding time grows with L: least-squares line (ms per extra word, R^2) and from "
                "L_max / 2 to L_max (ratio of times; log-log slope: 1 linear, 2 quadratic); the rows "
                "'minus' are the attention's own cost",
                "columns": ["decoder", "ms per word (slope)", "R^2", "lengths", "time ratio", "exponent"],
                "rows": growth_rows,
            },
        ],
    }
