"""Paper tables and their reproduced counterparts.

``build_table`` joins a table file's rows (parsed and validated by :func:`nmt.config.table_files.load_table`) with the
scores files written by ``nmt evaluate`` into a :class:`pandas.DataFrame`.

Reproduced numbers come *only* from scores files: a row whose system has no scores file is
reported with status ``'missing'``, never filled in.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ..base import layout
from ..base.errors import InputError
from ..base.files import read_json
from ..config.schema import validator
from ..config.table_files import BLEU_COLUMNS, COLUMN_LABELS, KNOWN_COLUMNS, SIGNED_COLUMNS, is_number, load_table
from .partial import runs_text

__all__ = ["BLEU_COLUMNS", "COLUMN_LABELS", "SIGNED_COLUMNS", "load_table", "build_table", "read_json_object",
           "read_scores", "scores_path", "dataframe_records"]

STATUS_MEASURED = "measured"
STATUS_MISSING = "missing"
STATUS_NOT_RUN = "not run"
STATUS_REFERENCE = "reference"
#: sacreBLEU's length diagnostics a scores file keeps beside each BLEU field F (``F_bp``, ``F_ratio``), and a table
#: beside each BLEU column c (``ours_c_bp``, ``ours_c_ratio``).
BLEU_DIAGNOSTICS = ("bp", "ratio")


def scores_path(scores_dir: Path, system: str, testset: str) -> Path:
    """Where ``nmt evaluate`` writes the scores of ``system`` on ``testset`` (a task's scores directory)."""
    return layout.under(scores_dir, layout.SCORES_DIR, layout.SCORES, system=system, testset=testset)


def read_json_object(path: Path, what: str = "the file", schema=None) -> dict:
    """A JSON file that must hold one object (nmt.base.files.read_json), valid against ``schema`` when given (a
    validator, e.g. nmt.config.schema.validator("scores")); InputError naming the file and the line and column of
    bad JSON or invalid UTF-8, or the key whose value breaks the schema."""
    return read_json(path, what, schema=schema)


_VALID_SCORES: set[tuple] = set()  # (path, size, mtime): scores files found valid (the claims read each many times)


def _file_state(path: Path) -> tuple | None:
    try:
        stat = path.stat()
    except OSError:
        return None  # the reader names the problem
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def read_scores(path: Path, *, system: str | None = None, testset: str | None = None,
                pair: str | None = None, preset: str | None = None) -> dict:
    """Read one scores JSON file, checked against schemas/scores.schema.yaml; check that its identity fields (when
    present) match.

    Raises ``InputError`` (a ValueError; `nmt report` says it in one line) naming the file when it is not a
    JSON object, when a field has the wrong type (naming the key: ``bleu_tok: 'high' is not of type 'number',
    'null'``), when an identity field disagrees with what the caller expects, or when a metric value is not a
    finite number.
    """
    path = Path(path)
    # checked against the schema once per file state: checking its thousands of per-sentence counts again each time
    # the claims read it would cost seconds
    state = _file_state(path)
    checked_before = state is not None and state in _VALID_SCORES
    data = read_json_object(path, "a scores file", schema=None if checked_before else validator("scores"))
    if state is not None:
        _VALID_SCORES.add(state)
    for key, expected in (("system", system), ("testset", testset), ("pair", pair), ("preset", preset)):
        if expected is not None and key in data and data[key] != expected:
            raise InputError(f"{path}: '{key}' is {data[key]!r}, expected {expected!r}")
    checked = [*KNOWN_COLUMNS, *(f"{c}_{d}" for c in sorted(BLEU_COLUMNS) for d in BLEU_DIAGNOSTICS)]
    for c in checked:
        v = data.get(c)
        if v is not None and not is_number(v):
            raise InputError(f"{path}: {c}: must be a finite number or null (got {v!r})")
    return data


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


def build_table(table: dict, scores_dir: Path, pair: str, preset: str, unavailable: str | None = None,
                runs: dict[str, list[str]] | None = None, partial: bool = False) -> pd.DataFrame:
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
        scores = [read_scores(f, system=run, testset=testset, pair=pair, preset=preset)
                  for run, f in zip(row_runs, run_files)]
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
