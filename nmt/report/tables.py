"""Paper tables and their reproduced counterparts.
Details: docs/internals/report.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ..config.table_files import BLEU_COLUMNS, COLUMN_LABELS, SIGNED_COLUMNS, load_table
from ..records.scores import BLEU_DIAGNOSTICS, read_scores, scores_path
from .partial import runs_text

__all__ = ["BLEU_COLUMNS", "COLUMN_LABELS", "SIGNED_COLUMNS", "load_table", "build_table", "dataframe_records"]

STATUS_MEASURED = "measured"
STATUS_MISSING = "missing"
STATUS_NOT_RUN = "not run"
STATUS_REFERENCE = "reference"


def _row_status(row: dict, scores_file: Path | None) -> tuple[str, str]:
    """(status, note) for a table row; ``scores_file`` is its scores path (None: no system)."""
    system, requires, note = row["system"], row.get("requires"), row.get("note")
    if system is None:
        if requires:
            status, text = STATUS_NOT_RUN, f"not run: requires {requires}"
        else:
            status, text = STATUS_REFERENCE, "reference (paper only)"
    elif scores_file is not None and scores_file.is_file():
        status, text = STATUS_MEASURED, "measured"
    elif requires:
        status, text = STATUS_NOT_RUN, f"not run: requires {requires}"
    else:
        status, text = STATUS_MISSING, f"MISSING results: no {scores_file.name}"
    if note:
        text = f"{text}; {note}"
    return status, text


def build_table(
    table: dict,
    scores_dir: Path,
    pair: str,
    preset: str,
    unavailable: str | None = None,
    runs: dict[str, list[str]] | None = None,
    partial: bool = False,
) -> pd.DataFrame:
    """One DataFrame row per table row, in paper order.

    Columns: ``label``, ``system`` (None for paper-only rows), ``status`` (``'measured'``,
    ``'missing'``, ``'not run'``, ``'reference'``), ``note`` (human-readable status), then for
    each table column ``c``: ``paper_c`` and ``ours_c`` (floats; NaN where there is no number).
    ``ours_c`` is only ever set from ``scores_dir/{system}.{testset}.json``. ``unavailable``: why the
    preset cannot measure this table at all (nmt.config.plan.unavailable_tables); every system row is then not run.
    ``runs`` ({system: [system, system_seedB, ...]}, nmt.config.plan.collect_runs) names the systems trained with
    several seeds: their row shows the mean over the runs, and the table gains ``ours_c_sd`` (the runs' sample
    standard deviation) per column, ``n_runs`` (the runs averaged) and ``n_planned`` (the runs the preset plans); a
    row is missing while one of its runs has no scores file, unless ``partial`` (a run made one seed at a time, not
    all in): then it is the mean of the runs that have one, its note saying how many ("measured: 1 of 3 runs").
    Each BLEU column ``c`` also gets ``ours_c_bp`` and ``ours_c_ratio``: sacreBLEU's brevity penalty and length ratio
    of the field shown (``F_bp``, ``F_ratio`` of the scores file; the mean over a row's runs), NaN where a scores file
    written before they existed lacks them.
    """
    runs = runs or {}
    seeded = any(row["system"] in runs for row in table["rows"])
    scores_dir = Path(scores_dir)
    columns = table["columns"]
    testset = table["testset"]
    records = []
    for row in table["rows"]:
        system = row["system"]
        sfile = scores_path(scores_dir, system, testset) if system is not None else None
        if unavailable and system is not None:
            row = {**row, "requires": unavailable}
            sfile = None
        status, note = _row_status(row, sfile)
        planned = runs.get(system, [system]) if status in (STATUS_MEASURED, STATUS_MISSING) else []
        row_runs = [run for run in planned if scores_path(scores_dir, run, testset).is_file()]
        if partial and row_runs and len(row_runs) < len(planned):  # the runs scored so far, and how many
            status = STATUS_MEASURED
            note = "; ".join([f"measured: {runs_text(len(row_runs), len(planned))}", *filter(None, [row.get("note")])])
        elif len(row_runs) < len(planned):  # a seed run not scored (yet)
            absent = next(run for run in planned if run not in row_runs)
            status, note = STATUS_MISSING, f"MISSING results: no {scores_path(scores_dir, absent, testset).name}"
            if row_runs:
                note += f" ({runs_text(len(row_runs), len(planned))} scored: nmt report --partial shows their mean)"
            row_runs = []
        run_files = [scores_path(scores_dir, run, testset) for run in row_runs]
        rec: dict[str, Any] = {"label": row["label"], "system": system, "status": status, "note": note}
        scores = [
            read_scores(f, system=run, testset=testset, pair=pair, preset=preset) for run, f in zip(row_runs, run_files)
        ]
        for c in columns:
            p = row["paper"].get(c)
            rec[f"paper_{c}"] = float(p) if p is not None else math.nan
            field = row["values_from"].get(c, c)  # e.g. the "+ unk replace" row: bleu_tok_unk
            values = [s.get(field) for s in scores] if field is not None else []
            # every run or none: a run whose scores file lacks the field (written before it existed) makes the
            # row's value missing rather than the mean of the others
            values = [float(v) for v in values] if values and all(v is not None for v in values) else []
            rec[f"ours_{c}"] = sum(values) / len(values) if values else math.nan
            if seeded:
                rec[f"ours_{c}_sd"] = _sample_sd(values)
            if c in BLEU_COLUMNS:
                for d in BLEU_DIAGNOSTICS:
                    rec[f"ours_{c}_{d}"] = _diagnostic_mean(scores, field, d)
        if seeded:
            rec["n_runs"], rec["n_planned"] = len(row_runs), len(planned)
        records.append(rec)
    names = ["label", "system", "status", "note"]
    floats = []
    for c in columns:
        floats += [f"paper_{c}", f"ours_{c}"] + ([f"ours_{c}_sd"] if seeded else [])
        floats += [f"ours_{c}_{d}" for d in BLEU_DIAGNOSTICS] if c in BLEU_COLUMNS else []
    names += floats + (["n_runs", "n_planned"] if seeded else [])
    df = pd.DataFrame.from_records(records, columns=names)
    for name in floats:
        df[name] = df[name].astype("float64")
    return df


def _diagnostic_mean(scores: list[dict], field: str | None, diagnostic: str) -> float:
    """The mean of ``{field}_{diagnostic}`` (e.g. bleu_tok_bp) over the runs that scored ``field``; NaN when none
    did, or when one of them lacks it (a scores file written before the length diagnostics existed)."""
    if field is None:
        return math.nan
    scored = [s for s in scores if s.get(field) is not None]
    values = [s.get(f"{field}_{diagnostic}") for s in scored]
    if not values or any(v is None for v in values):
        return math.nan
    return sum(float(v) for v in values) / len(values)


def _sample_sd(values: list[float]) -> float:
    """The sample standard deviation (n - 1) of a row's runs; NaN for fewer than two."""
    if len(values) < 2:
        return math.nan
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def dataframe_records(df: pd.DataFrame) -> list[dict]:
    """The DataFrame as JSON-ready records (orient='records'): NaN/None -> None, numpy -> Python."""
    out = []
    for rec in df.to_dict(orient="records"):
        clean = {}
        for k, v in rec.items():
            if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
                clean[k] = None
            elif hasattr(v, "item"):  # numpy scalar
                clean[k] = v.item()
                if isinstance(clean[k], float) and math.isnan(clean[k]):
                    clean[k] = None
            else:
                clean[k] = v
        out.append(clean)
    return out
