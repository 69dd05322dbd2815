"""HTML reproduction report: paper tables beside the reproduced numbers.

- :func:`load_table` / :func:`build_table` (``nmt.report.tables``): table files -> DataFrames.
- :func:`learning_curves` (``nmt.report.plots``): dev-perplexity curves (PNG).
- :class:`ReportInputs` (``nmt.report.inputs``): what a report is rendered from; :func:`report_inputs`
  (``nmt.report.assemble``) assembles them from a run.
- :func:`render_report` (``nmt.report.render``): ``index.html`` + per-table CSV/JSON + ``summary.json``.
"""

from .inputs import ReportInputs
from .plots import learning_curves
from .render import render_report
from .tables import build_table, load_table

__all__ = ["ReportInputs", "build_table", "learning_curves", "load_table", "render_report"]
