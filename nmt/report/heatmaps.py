"""Attention heat maps like Figure 7 of Luong et al. (2015) (matplotlib Agg, no pyplot global state).

One panel per model (or the gold alignment): source words along the top, reference words down the side,
grey scale from white (0) to black (1) on the same range in every panel. The figure grows with the sentence
lengths so that the word labels keep a readable size.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import save_png

Panel = tuple[str, Sequence[str], Sequence[str], "np.ndarray | Sequence[Sequence[float]]"]

CELL_IN = 0.22  # inches per word: room for an 8 pt label beside each row / column
LABEL_IN = 1.2  # room for the word labels (and the panel title) around each matrix
WORD_FONT_PT = 8
MAX_COLUMNS = 3


def _matrix(panel: Panel) -> np.ndarray:
    label, src, tgt, weights = panel
    matrix = np.asarray(weights, dtype=float)
    if matrix.shape != (len(tgt), len(src)):
        raise ValueError(
            f"panel {label!r}: matrix is {'x'.join(map(str, matrix.shape))}, expected "
            f"{len(tgt)}x{len(src)} (target words x source words)"
        )
    return matrix


def _grid(n: int) -> tuple[int, int]:
    """(rows, columns): side by side up to MAX_COLUMNS panels, then a near-square grid (4 -> 2x2)."""
    columns = n if n <= MAX_COLUMNS else min(MAX_COLUMNS, math.ceil(math.sqrt(n)))
    return math.ceil(n / columns), columns


def attention_heatmaps(panels: Sequence[Panel], out_png: str | Path, title: str) -> None:
    """Draw (label, source words, target words, T x S matrix) panels into one PNG (same inputs, same bytes).

    Raises `ValueError` when there is no panel or a matrix does not match its words."""
    if not panels:
        raise ValueError("no panels to draw")
    matrices = [_matrix(p) for p in panels]
    rows, columns = _grid(len(panels))
    longest_src = max(len(p[1]) for p in panels)
    longest_tgt = max(len(p[2]) for p in panels)
    width = columns * (longest_src * CELL_IN + LABEL_IN) + 1.0  # + the colour bar
    height = rows * (longest_tgt * CELL_IN + LABEL_IN) + 0.5  # + the figure title
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (label, src, tgt, _), matrix in zip(axes, panels, matrices):
        image = ax.imshow(matrix, cmap="Greys", vmin=0.0, vmax=1.0, interpolation="nearest", aspect="equal")
        ax.xaxis.tick_top()  # source words above the matrix, as in the paper
        ax.set_xticks(range(len(src)), labels=src, rotation=90, fontsize=WORD_FONT_PT)
        ax.set_yticks(range(len(tgt)), labels=tgt, fontsize=WORD_FONT_PT)
        ax.tick_params(length=0)
        ax.set_xlabel(label, fontsize=10)  # below the matrix: the top is taken by the source words
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    fig.colorbar(image, ax=axes[: len(panels)].tolist(), shrink=0.6, label="attention weight")
    fig.suptitle(title, fontsize=11)
    save_png(fig, Path(out_png))
