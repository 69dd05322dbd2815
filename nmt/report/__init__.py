"""HTML reproduction report: paper tables beside the reproduced numbers.
Details: docs/internals/report.md."""

from .inputs import ReportInputs
from .plots import learning_curves
from .render import render_report
from .tables import build_table, load_table

__all__ = ["ReportInputs", "build_table", "learning_curves", "load_table", "render_report"]
