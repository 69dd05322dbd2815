"""HTML reproduction report: paper tables beside the reproduced numbers.

- :func:`load_table` / :func:`build_table` (``nmt.report.tables``): table files -> DataFrames.
- :func:`learning_curves` (``nmt.report.plots``): dev-perplexity curves (PNG).
- :func:`render_report` (``nmt.report.render``): ``index.html`` + per-table CSV/JSON + ``summary.json``.
"""

from .plots import learning_curves
from .render import render_report
from .tables import build_table, load_table

__all__ = ["build_table", "learning_curves", "load_table", "render_report"]
