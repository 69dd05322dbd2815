"""Render the HTML reproduction report (paper numbers beside reproduced ones).
Details: docs/internals/report.md."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import jinja2

from ..base.atomic import write_bytes_atomic, write_text_atomic
from ..base.environment import describe
from ..base.errors import ConfigError, InputError
from ..base.files import read_json
from ..config.table_files import is_number
from ..data.staging import staged_directory
from ..records import metrics as metrics_file
from ..records import model_info
from ..records import report_files as report_records
from ..records import scores as scores_file
from ..records.headline import write_headlines
from ..records.scores import read_scores, scores_path
from ..scoring.bleu import is_lowercased
from .claims import claims_csv, claims_json, kendall_tau
from .claims_view import claims_markdown, claims_view
from .cost import environment_data, environment_view, training_seconds, training_time_cell
from .figures import FigureInputs, figure_view
from .headings import heading
from .inputs import ReportInputs
from .plots import curve_points, learning_curves
from .setting_changes import flatten, settings_view
from .speed import ATTENTION_FIGURES, MONOTONIC_FIGURES, attention_speed_view, monotonic_speed_view
from .tables import (
    COLUMN_LABELS,
    SIGNED_COLUMNS,
    STATUS_MEASURED,
    STATUS_MISSING,
    build_table,
    dataframe_records,
    load_table,
)

TEMPLATE_DIR = Path(__file__).parent / "templates"
# the run files the page names (nmt.records), as the template says them
RUN_FILE_NAMES = {
    "metrics": metrics_file.NAME,
    "model_info": model_info.NAME,
    "claims": report_records.CLAIMS_NAME,
    "scores_dir": scores_file.DIR_NAME,
}
DASH = "\u2013"  # en dash: empty cell
# The report's speed sections: benchmark name (`nmt bench NAME`, results/PRESET/benchmarks/NAME.json) -> the view
# builder of nmt.report.speed and the PNGs it writes.
SPEED_VIEWS = {
    "attention": (attention_speed_view, ATTENTION_FIGURES),
    "monotonic": (monotonic_speed_view, MONOTONIC_FIGURES),
}

# The report's own files in its directory (nmt.data.staging): whatever else is there (a reference's README.md) is kept.
REPORT_SUFFIXES = (".html", ".json", ".csv", ".png")
CLAIMS_MARKDOWN = "claims.md"
MANIFEST = ".report-files.json"  # the files the report wrote: what the next report may replace, and nothing else
MANIFEST_SCHEMA = {
    "type": "object",
    "required": ["files"],
    "properties": {"files": {"type": "array", "items": {"type": "string", "pattern": "^[^/]+$"}}},
}
# `nmt report` renders a page only where at least this fraction of the expected scores files exist (--partial: any).
ENOUGH_SCORES = 0.5

SIZE_LABELS = {
    "layers": "layers",
    "hidden": "hidden",
    "embed": "embed",
    "params": "parameters",
    "src_vocab": "src vocab",
    "tgt_vocab": "tgt vocab",
}


# --------------------------------------------------------------------------- formatting helpers


def fmt_metric(value: Any, column: str) -> str:
    """ppl / BLEU / AER with 2 decimals; missing (None/NaN) -> en dash."""
    if value is None or not is_number(value):
        return DASH
    return f"{float(value):.2f}"


def fmt_diagnostic(value: Any) -> str:
    """A BLEU score's brevity penalty or length ratio with 3 decimals (as sacreBLEU prints them); missing (a scores
    file written before they existed) -> en dash."""
    if value is None or not is_number(value):
        return DASH
    return f"{float(value):.3f}"


def fmt_value(value: Any) -> str:
    """Generic value for the 'how produced' tables."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return DASH
        if value.is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def model_sizes(model_json: dict | None) -> dict[str, Any]:
    """Sizes of a trained system, from the model info that `nmt train` wrote beside it."""
    if not model_json:
        return dict.fromkeys(SIZE_LABELS)
    model = (model_json.get("config") or {}).get("model") or {}
    return {
        "layers": model.get("layers"),
        "hidden": model.get("hidden"),
        "embed": model.get("embed"),
        "params": model_json.get("parameters"),
        "src_vocab": model_json.get("src_vocab"),
        "tgt_vocab": model_json.get("tgt_vocab"),
    }


def _display_path(path: Path, base: Path, shown_base: str) -> str:
    """``path`` relative to ``base``, prefixed by ``shown_base`` (posix)."""
    try:
        rel = Path(path).relative_to(base).as_posix()
    except ValueError:
        return Path(path).as_posix()
    return f"{shown_base}/{rel}" if shown_base else rel


def _shown_results_base(results_dir: Path) -> str:
    """How results_dir is named on the page: as given when relative, else its last two parts
    (``results/{preset}``), so the page does not depend on where the checkout lives."""
    if not results_dir.is_absolute():
        return results_dir.as_posix()
    parts = results_dir.parts[-2:]
    return "/".join(parts)


def _shown_table_path(path: Path) -> str:
    if not path.is_absolute():
        return path.as_posix()
    return "/".join(path.parts[-3:])


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --------------------------------------------------------------------------- context rendering


def _splits_view(splits: Any) -> dict | None:
    """corpus.splits {split: {stat: value}} -> header + rows (union of stats, first-seen order)."""
    if not isinstance(splits, dict) or not splits:
        return None
    stats: list[str] = []
    for v in splits.values():
        if isinstance(v, dict):
            for k in v:
                if k not in stats:
                    stats.append(k)
    rows = []
    for name, v in splits.items():
        if isinstance(v, dict):
            rows.append({"name": str(name), "cells": [fmt_value(v.get(s)) for s in stats]})
        else:
            rows.append({"name": str(name), "cells": [fmt_value(v)] + [DASH] * (len(stats) - 1)})
    if not stats:
        stats = ["value"]
    return {"stats": [s.replace("_", " ") for s in stats], "rows": rows}


def _kv_rows(d: Any) -> list[dict]:
    return [{"key": k, "value": fmt_value(v)} for k, v in flatten(d)] if isinstance(d, dict) else []


def _block_view(value: Any) -> dict | None:
    """A context value as a block: 'grid' for {name: {key: scalar}} (e.g. per-system settings),
    'kv' for other mappings (nested keys flattened with dots), 'list', or 'text'."""
    if value is None or value == {} or value == []:
        return None
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            keys: list[str] = []
            for v in value.values():
                for k in v:
                    if k not in keys:
                        keys.append(k)
            if keys and all(not isinstance(x, dict) for v in value.values() for x in v.values()):
                rows = [{"name": str(name), "cells": [fmt_value(v.get(k)) for k in keys]} for name, v in value.items()]
                return {"kind": "grid", "columns": [str(k).replace("_", " ") for k in keys], "rows": rows}
        return {"kind": "kv", "rows": _kv_rows(value)}
    if isinstance(value, (list, tuple)):
        return {"kind": "list", "items": [x if isinstance(x, str) else fmt_value(x) for x in value]}
    return {"kind": "text", "text": fmt_value(value)}


def _corpus_view(corpus: Any, heading: str | None = None) -> dict | None:
    if isinstance(corpus, dict):
        if not corpus:
            return None
        extra = {k: v for k, v in corpus.items() if k not in ("name", "description", "splits")}
        return {
            "heading": heading,
            "name": str(corpus["name"]) if corpus.get("name") is not None else None,
            "description": str(corpus["description"]) if corpus.get("description") is not None else None,
            "splits": _splits_view(corpus.get("splits")),
            "extra": _kv_rows(extra),
        }
    if corpus is None:
        return None
    return {"heading": heading, "name": str(corpus), "description": None, "splits": None, "extra": []}


def _context_view(context: dict) -> dict:
    """What the 'How these numbers were produced' section shows, from the caller's context.

    Known keys: corpus (or corpora: {task: corpus}, corpora_in_words: them in one line), training ({system:
    settings}, shown as what differs, with preset_training the preset's own), generated_by, generated_at, notes.
    Any other key gets its own sub-section."""
    context = context or {}
    corpora = context.get("corpora")
    corpus_views: list[dict] = []
    if isinstance(corpora, dict) and corpora and all(isinstance(c, dict) for c in corpora.values()):
        described: dict[str, str] = {}  # a corpus playing several tasks is described once
        for task, c in corpora.items():
            v = _corpus_view(c, heading=f"task {task}" if len(corpora) > 1 else None)
            if v:
                if v["description"] in described:
                    v["description"] = f"described under {described[v['description']]}"
                elif v["description"] is not None:
                    described[v["description"]] = f"task {task}"
                corpus_views.append(v)
    else:
        v = _corpus_view(context.get("corpus"))
        if v:
            corpus_views.append(v)
    names = [v["name"] for v in corpus_views if v["name"]]
    notes = context.get("notes")
    if notes is None:
        notes = []
    elif isinstance(notes, (str, int, float)):
        notes = [str(notes)]
    else:
        notes = [n if isinstance(n, str) else fmt_value(n) for n in notes]
    known = {
        "corpus",
        "corpora",
        "corpora_in_words",
        "training",
        "preset_training",
        "generated_by",
        "notes",
        "generated_at",
    }
    other = []
    for k, v in context.items():
        if k in known:
            continue
        block = _block_view(v)
        if block:
            other.append({"title": str(k).replace("_", " "), "block": block})
    training = context.get("training")
    per_system = isinstance(training, dict) and bool(training) and all(isinstance(v, dict) for v in training.values())
    return {
        "corpora": corpus_views,
        "corpus_name": context.get("corpora_in_words") or (", ".join(names) if names else None),
        # settings per system (nmt.report.context): what differs; any other shape as it is
        "settings": settings_view(training, context.get("preset_training"), fmt_value) if per_system else None,
        "training": None if per_system else _block_view(training),
        "generated_by": str(context["generated_by"]) if context.get("generated_by") is not None else None,
        "generated_at": str(context["generated_at"]) if context.get("generated_at") is not None else None,
        "notes": notes,
        "other": other,
    }


# --------------------------------------------------------------------------- main entry point


def _table_systems_in_order(table: dict) -> list[str]:
    order: list[str] = []
    for row in table["rows"]:
        if row["system"] in table["systems"] and row["system"] not in order:  # trained systems, not ensembles
            order.append(row["system"])
    for s in table["systems"]:
        if s not in order:
            order.append(s)
    return order


def check_scores(expected: list[Path], results_dir: Path, preset: str, partial: bool = False) -> list[Path]:
    """The expected scores files (every one the preset's tables and figures read) that are missing. Refuses
    (InputError, one line) when fewer than ENOUGH_SCORES (half) of them exist, unless ``partial``: a report of mostly
    MISSING rows (a mistyped --results, a run not made yet) is not rendered over a good one."""
    missing = [path for path in expected if not Path(path).is_file()]
    found = len(expected) - len(missing)
    if partial or not expected or found >= ENOUGH_SCORES * len(expected):
        return missing
    if not found:
        where = "" if Path(results_dir).is_dir() else ", no such directory"
        raise InputError(
            f"{results_dir}: no scores files of preset {preset} ({len(expected)} expected{where}); a "
            "report would be all MISSING: check --results, or pass --partial"
        )
    raise InputError(
        f"{results_dir}: {found} of the {len(expected)} scores files of preset {preset} (fewer than "
        f"half; e.g. no {missing[0]}); a report would be mostly MISSING: finish the run, check --results, "
        "or pass --partial"
    )


# what a file the page expected and did not find is, singular and plural (nmt.report.figures' MissingInput kinds)
MISSING_KINDS = {
    "scores": ("scores file", "scores files"),
    "translation": ("translation", "translations"),
    "attention": ("attention file", "attention files"),
    "prepared": ("prepared test-set file", "prepared test-set files"),
}


def missing_in_words(kinds: list[str]) -> str:
    """The missing files' count as the page says it, each kind counted: "19 expected scores files", or
    "36 expected files (33 scores files, 2 attention files and 1 translation)"."""
    counts = {kind: kinds.count(kind) for kind in dict.fromkeys(kinds)}
    if len(counts) == 1:
        kind, n = counts.popitem()
        return f"{n} expected {MISSING_KINDS[kind][n != 1]}"
    said = [f"{n} {MISSING_KINDS[kind][n != 1]}" for kind, n in counts.items()]
    listed = ", ".join(said[:-1]) + f" and {said[-1]}" if len(said) > 1 else "none"
    return f"{len(kinds)} expected file{'' if len(kinds) == 1 else 's'} ({listed})"


def training_problems(results_dir: Path, trained: dict[str, dict]) -> list[str]:
    """What is wrong with the records of the trainings of ``trained`` ({pair: {run: ...}}, seed runs included:
    nmt.config.plan.collect_systems) that left any: a metrics file or a model info missing beside the other.
    A training that left neither is not run (yet), which its rows say (MISSING); an empty or malformed
    metrics file is refused where it is read (nmt.records.metrics.read_metrics)."""
    problems = []
    for pair, systems in trained.items():
        for system in systems:
            mfile = metrics_file.metrics_path(Path(results_dir), pair, system)
            jfile = model_info.model_info_path(Path(results_dir), pair, system)
            if mfile.is_file() and not jfile.is_file():
                problems.append(
                    f"{pair}/{system}: no {model_info.NAME} beside its {metrics_file.NAME} (an unfinished "
                    "or damaged training): its size, time and environment are unknown"
                )
            elif jfile.is_file() and not mfile.is_file():
                problems.append(
                    f"{pair}/{system}: no {metrics_file.NAME} beside its {model_info.NAME}: no learning "
                    "curve, convergence unknown"
                )
    return problems


def _report_file(entry: Path) -> bool:
    return entry.is_file() and (entry.suffix in REPORT_SUFFIXES or entry.name == CLAIMS_MARKDOWN)


def report_files(out_dir: Path):
    """Which entries of ``out_dir`` an earlier report made, and so may replace: those its manifest names; in a report
    written before manifests (index.html and its summary there, no manifest), its kinds of file; in a directory no
    report made, none (the user's own files stay, and one the report would write over stops it)."""
    manifest = out_dir / MANIFEST
    if manifest.is_file():
        names = set(read_json(manifest, "a report's manifest", schema=MANIFEST_SCHEMA)["files"]) | {MANIFEST}
        return lambda entry: entry.is_file() and entry.name in names
    if (out_dir / "index.html").is_file() and (out_dir / report_records.SUMMARY_NAME).is_file():
        return _report_file
    return lambda entry: False


def _write_manifest(staging: Path, out_dir: Path, own) -> None:
    """The manifest of the files the report wrote into ``staging``; a file of the same name in ``out_dir`` that no
    report made is refused (one line), before anything there is replaced."""
    written = sorted(entry.name for entry in staging.iterdir() if entry.is_file())
    for name in written:
        there = out_dir / name
        if there.is_file() and not own(there):
            raise InputError(
                f"{there}: not a file a report made (no report manifest names it), and the report "
                f"would write over it; give --out a directory of its own, or move the file"
            )
    write_bytes_atomic(staging / MANIFEST, (json.dumps({"files": written}, indent=1) + "\n").encode())


def render_report(inputs: ReportInputs, out_dir: Path) -> Path:
    """Render the report of ``inputs`` (nmt.report.inputs says what each is) into ``out_dir``.

    Writes (atomically) ``index.html``, ``{table_id}.csv``, ``{table_id}.json`` (records),
    ``{table_id}_learning_curves.png`` when any system has dev-ppl metrics, the claims file and the summary
    (``{table_id: {system: {metric: value}}}`` for measured systems: nmt.records.report_files).
    The directory is replaced whole (module doc). Returns the index path.
    """
    own = report_files(Path(out_dir))
    with staged_directory(out_dir, own=own) as staging:
        _render(out_dir=staging, **inputs.as_dict())
        _write_manifest(staging, Path(out_dir), own)
    return Path(out_dir) / "index.html"


def _render(
    *,
    out_dir: Path,
    preset,
    preset_description,
    tables,
    results_dir,
    pair_for_task,
    context,
    speed,
    figures,
    data_dir,
    unavailable,
    claims,
    claim_files,
    runs,
    deviations,
    machine,
    synthetic,
    trainings,
    run,
    problems,
    partial,
    ran_on,
    translations,
) -> None:
    """render_report's work, into ``out_dir`` (the staging directory)."""
    report = _Report(preset, Path(results_dir), pair_for_task, out_dir, runs or {})
    report.problems = list(problems or [])
    report.partial = partial
    report.ran_on = dict(ran_on or {})
    table_views, summary = [], {}
    for tpath in tables:
        view, summary[view["id"]] = report.table_view(Path(tpath), (unavailable or {}).get(Path(tpath)))
        table_views.append(view)
    learning_curve_pngs = {t["id"]: t["figure"] for t in table_views}
    figure_views = [report.figure_view(task, fig, data_dir, learning_curve_pngs) for task, fig in figures or []]
    speed_views = report.speed_views(speed or {})
    claims = list(claims or [])
    shown_claims = claims_view(
        preset, claims, claim_files or [], {t["id"] for t in table_views}, synthetic, trainings or []
    )
    loaded = {Path(tpath): load_table(Path(tpath)) for tpath in tables}
    environment = environment_data(
        describe() if machine is None else machine,
        list(loaded.values()),
        Path(results_dir),
        pair_for_task,
        runs,
        {loaded[Path(p)]["id"] for p in unavailable or {} if Path(p) in loaded},
    )
    html = report.html(
        preset_description,
        table_views,
        figure_views,
        speed_views,
        dict(context or {}),
        shown_claims,
        _deviations_view(deviations),
        environment_view(environment),
    )
    # the claims file: claims.py's content, and where the runs were made and what they cost (nmt.report.cost)
    claims_record = {
        **claims_json(preset, claims, trainings),
        "environment": environment,
        **({"run": run} if run else {}),
    }
    report_records.write_claims(out_dir, claims_record)
    report_records.write_report_json(out_dir / "environment.json", environment)
    write_text_atomic(out_dir / "claims.csv", claims_csv(claims))
    write_text_atomic(out_dir / CLAIMS_MARKDOWN, claims_markdown(claims_record))
    report_records.write_summary(out_dir, summary)
    write_headlines(out_dir, results_dir, translations or [], claims_record["summary"])
    write_text_atomic(out_dir / "index.html", html)


def header_label(column: str, signatures: list[dict]) -> str:
    """Our scores' column header, naming for a BLEU or chrF column the case they were computed with, as their
    sacreBLEU signatures say: "BLEU (tok, lowercased)" where the text was lowercased in preparation (case:lc), "cased"
    where the scores are case-sensitive (as the papers' BLEU is), "case varies" where the rows differ."""
    label = COLUMN_LABELS[column]
    if column not in SIGNED_COLUMNS:
        return label
    cases = {
        "lowercased" if is_lowercased(s["signature"]) else "cased"
        for s in signatures
        if s["metric"] == label and "case:" in s["signature"]
    }
    if not cases:
        return label
    case = cases.pop() if len(cases) == 1 else "case varies"
    return f"{label[:-1]}, {case})" if label.endswith(")") else f"{label} ({case})"


def _reference_used(field: str, scores: dict) -> str:
    """What a BLEU field was scored against: the tokenised reference, or for detokenised BLEU the test set's raw
    reference where the preset has one, else the tokenised reference detokenised with sacremoses."""
    if "detok" not in field:
        return f"tokenised reference {scores.get('ref') or ''}".strip()
    used = scores.get("bleu_detok_reference") or {}
    if used.get("kind") == "raw":
        return f"raw reference {used['path']}"
    return (
        f"tokenised reference {used.get('path') or scores.get('ref') or ''}, detokenised with sacremoses "
        "(this preset has no raw reference for this test set)"
    )


def _deviations_view(found: dict | None) -> dict:
    found = found or {"corpora": [], "settings": [], "declared": []}
    settings = [{**d, "count": len(d["systems"]), "systems": ", ".join(d["systems"])} for d in found["settings"]]
    return {
        "corpora": found["corpora"],
        "settings": settings,
        "declared": found["declared"],
        "count": len(found["corpora"]) + len(settings) + len(found["declared"]),
    }


def _table_tau(records: list[dict], columns: list[str]) -> list[dict]:
    """Kendall's tau between the paper's and our values of the table's rows, per column with at least 2 rows."""
    out = []
    for c in columns:
        tau, n = kendall_tau([r[f"paper_{c}"] for r in records], [r[f"ours_{c}"] for r in records])
        if n >= 2:
            out.append({"label": COLUMN_LABELS[c], "tau": DASH if tau is None else f"{tau:+.2f}", "n": n})
    return out


class _Report:
    """What the sections of one report share: where results are, the source files it read (with their hashes),
    the score files it missed and the systems it has described."""

    def __init__(
        self,
        preset: str,
        results_dir: Path,
        pair_for_task: dict[str, str],
        out_dir: Path,
        runs: dict[str, dict[str, list[str]]],
    ):
        self.preset, self.results_dir, self.pair_for_task, self.out_dir = preset, results_dir, pair_for_task, out_dir
        self.runs = runs
        self.shown_base = _shown_results_base(results_dir)
        self.sources: dict[str, dict] = {}  # shown path -> {path, sha256, kind}
        self.missing_files: list[str] = []
        self.missing_kinds: list[str] = []  # what each of them is (a key of MISSING_KINDS)
        self.not_included: list[str] = []  # what this page could not show, and the file it lacked (said at the top)
        self.problems: list[str] = []  # what is wrong with the trainings' records (training_problems)
        self.partial: dict | None = None  # how much of a run made one seed at a time is in (nmt.report.partial)
        self.ran_on: dict[str, str] = {}  # {task: the corpus that played it, in words}: what the headings say
        self.system_views: list[dict] = []
        self.seen_systems: set[tuple[str, str]] = set()
        self.seen_ids: set[str] = set()

    def shown(self, path: Path) -> str:
        return _display_path(path, self.results_dir, self.shown_base)

    def heading(self, paper: str, title: str, task: str) -> dict:
        """A table's or figure's heading (nmt.report.headings): what ran its task, else its corpus pair."""
        ran = self.ran_on.get(task) or f"pair {self.pair_for_task.get(task, task)}"
        return heading(paper, title, ran)

    def missed(self, shown: str, kind: str) -> None:
        """An expected file (of ``kind``) that is not there: listed once at the top of the page."""
        if shown not in self.missing_files:
            self.missing_files.append(shown)
            self.missing_kinds.append(kind)

    def add_source(self, path: Path, kind: str) -> str:
        shown = self.shown(path)
        if shown not in self.sources:
            self.sources[shown] = {"path": shown, "sha256": _sha256(path)[:16], "kind": kind}
        return shown

    # -- a paper table -------------------------------------------------------------------------------------------
    def table_view(self, tpath: Path, unavailable: str | None) -> tuple[dict, dict]:
        """The table's section (its CSV and JSON written beside the page) and its {system: metrics} summary."""
        table = load_table(tpath)
        tid = table["id"]
        if tid in self.seen_ids:
            raise InputError(f"{tpath}: table id {tid!r} is used by more than one table file")
        self.seen_ids.add(tid)
        task = table["task"]
        if task not in self.pair_for_task:
            raise InputError(
                f"{tpath}: task {task!r} has no corpus pair in preset {self.preset!r} "
                f"(pair_for_task has: {', '.join(sorted(self.pair_for_task)) or 'nothing'})"
            )
        pair = self.pair_for_task[task]
        scores_dir = scores_file.scores_dir(self.results_dir, pair)
        columns = table["columns"]

        df = build_table(
            table, scores_dir, pair, self.preset, unavailable, self.runs.get(pair), partial=bool(self.partial)
        )
        records = dataframe_records(df)
        write_text_atomic(self.out_dir / f"{tid}.csv", df.to_csv(index=False, lineterminator="\n"))
        report_records.write_report_json(self.out_dir / f"{tid}.json", records)

        # a column the paper gives no value in (the papers report no chrF) shows ours only
        with_paper = {c for c in columns if any(is_number(r[f"paper_{c}"]) for r in records)}
        row_views, signatures, table_summary, missing_systems = [], [], {}, []
        for rec, table_row in zip(records, table["rows"]):
            row_views.append(
                self.row_view(
                    rec, table_row, table, scores_dir, pair, signatures, table_summary, missing_systems, with_paper
                )
            )
        metrics_files = self.describe_systems(table, pair)
        figure = self.learning_curves(tid, metrics_files, pair)
        view = {
            "id": tid,
            "title": table["title"],
            "heading": self.heading(table["paper"], table["title"], task),
            "paper": table["paper"],
            "task": task,
            "pair": pair,
            "testset": table["testset"],
            "source": _shown_table_path(tpath),
            "paper_source": table.get("paper_source"),
            # our scores' headers say the case they were computed with; the paper's keep its own label
            "columns": [
                {
                    "key": c,
                    "label": COLUMN_LABELS[c],
                    "ours_label": header_label(c, signatures),
                    "paper": c in with_paper,
                }
                for c in columns
            ],
            "ours_only": [COLUMN_LABELS[c] for c in columns if c not in with_paper],
            "rows": row_views,
            "signatures": signatures,
            "missing": missing_systems,
            "n_measured": sum(1 for r in row_views if r["status"] == STATUS_MEASURED),
            "n_systems": sum(1 for r in row_views if r["system"] is not None),
            "figure": figure,
            "figure_systems": list(metrics_files),
            "csv": f"{tid}.csv",
            "json": f"{tid}.json",
            "tau": _table_tau(records, columns),
            "runs": max((r.get("n_runs") or 1 for r in records), default=1),
        }
        return view, table_summary

    def row_view(
        self,
        rec: dict,
        table_row: dict,
        table: dict,
        scores_dir: Path,
        pair: str,
        signatures: list,
        table_summary: dict,
        missing_systems: list,
        with_paper: set[str],
    ) -> dict:
        """One row's cells (the paper's only in the columns ``with_paper``); a measured row adds its metrics to the
        summary and its BLEU signatures, a missing one its scores file to the missing list."""
        system, columns, testset = rec["system"], table["columns"], table["testset"]
        cells = [
            {
                "paper": fmt_metric(rec[f"paper_{c}"], c),
                "paper_shown": c in with_paper,
                "ours": fmt_metric(rec[f"ours_{c}"], c)
                + (f" \u00b1 {fmt_metric(rec[f'ours_{c}_sd'], c)}" if is_number(rec.get(f"ours_{c}_sd")) else ""),
            }
            for c in columns
        ]
        source = None
        if system is not None:
            sfile = scores_path(scores_dir, system, testset)
            if rec["status"] == STATUS_MEASURED:
                source = self.add_source(sfile, "scores")
                scores = read_scores(sfile, system=system, testset=testset, pair=pair, preset=self.preset)
                metrics = {c: scores[c] for c in COLUMN_LABELS if is_number(scores.get(c))}
                for extra in ("n_sentences",):
                    if is_number(scores.get(extra)):
                        metrics[extra] = scores[extra]
                table_summary[system] = metrics
                for c in columns:
                    field = table_row["values_from"].get(c, c)
                    if c in SIGNED_COLUMNS and field is not None and is_number(scores.get(field)):
                        sig = scores.get(f"{field}_signature")
                        signatures.append(
                            {
                                "system": system,
                                "label": rec["label"],
                                "metric": COLUMN_LABELS[c],
                                "signature": str(sig) if sig else "(no signature recorded in the scores file)",
                                "reference": _reference_used(field, scores),
                                # of the row's value: the field's, averaged over the runs like the score (build_table)
                                "bp": fmt_diagnostic(rec.get(f"ours_{c}_bp")),
                                "ratio": fmt_diagnostic(rec.get(f"ours_{c}_ratio")),
                            }
                        )
            elif rec["status"] == STATUS_MISSING:
                shown = self.shown(sfile)
                missing_systems.append({"system": system, "file": shown})
                self.missed(shown, "scores")
        return {
            "label": rec["label"],
            "system": system,
            "status": rec["status"],
            "status_class": rec["status"].replace(" ", "-"),
            "note": rec["note"],
            "cells": cells,
            "source": source,
        }

    def describe_systems(self, table: dict, pair: str) -> dict[str, Path]:
        """Each of the table's systems once per pair in the systems section (sizes, training time, dev
        perplexity); returns the metrics files that have a learning curve to draw."""
        metrics_files: dict[str, Path] = {}
        for system in _table_systems_in_order(table):
            mfile = metrics_file.metrics_path(self.results_dir, pair, system)
            jfile = model_info.model_info_path(self.results_dir, pair, system)
            mrecords = metrics_file.read_metrics(mfile) if mfile.is_file() else []
            if mfile.is_file():
                self.add_source(mfile, "training metrics")
                if curve_points(mrecords):
                    metrics_files[system] = mfile
            else:
                if (pair, system) not in self.seen_systems:  # said once, by the first table that shows it
                    self.not_included.append(f"the learning curve of {pair}/{system}: no {self.shown(mfile)}")
            model_json = model_info.read_model_info(jfile) if jfile.is_file() else None
            if model_json is not None:
                self.add_source(jfile, "model")
                metrics_file.check_metrics(model_json, mrecords, mfile, jfile)  # this training's curve, not another's
            key = (pair, system)
            if key in self.seen_systems:
                continue
            self.seen_systems.add(key)
            sizes = model_sizes(model_json)
            last = mrecords[-1] if mrecords else {}
            self.system_views.append(
                {
                    "pair": pair,
                    "system": system,
                    "overrides": ", ".join(f"{k}={fmt_value(v)}" for k, v in flatten(table["systems"][system]))
                    or "(preset defaults)",
                    "sizes": [fmt_value(sizes[k]) for k in SIZE_LABELS],
                    "epochs": fmt_value(last.get("epoch")),
                    "updates": fmt_value(last.get("updates")),
                    "tok_per_s": fmt_value(round(last["tgt_tokens_per_s"]))
                    if is_number(last.get("tgt_tokens_per_s"))
                    else DASH,
                    # the model info's wall_s, else (an older one) the sum of the epochs' elapsed_s, marked (nmt.report.cost)
                    "elapsed": training_time_cell(*training_seconds(model_json, mrecords)),
                    "dev_ppl": fmt_metric(last.get("dev_ppl"), "ppl"),
                    "has_files": bool(mrecords or model_json),
                }
            )
        return metrics_files

    def learning_curves(self, tid: str, metrics_files: dict[str, Path], pair: str) -> str | None:
        """The table's learning-curve figure, or None (and no stale figure left behind) when nothing has one."""
        figure = f"{tid}_learning_curves.png"
        if not metrics_files:
            (self.out_dir / figure).unlink(missing_ok=True)
            return None
        learning_curves(
            metrics_files,
            self.out_dir / figure,
            f"{tid}: dev perplexity vs. updates (preset {self.preset}, pair {pair})",
        )
        return figure

    # -- figures, speed, the page ------------------------------------------------------------------------------
    def figure_view(self, task: str, fig: dict, data_dir: Path | None, learning_curve_pngs: dict) -> dict:
        inputs = None
        if task in self.pair_for_task and data_dir is not None:
            inputs = FigureInputs(self.results_dir, Path(data_dir), self.pair_for_task[task], self.add_source)
        elif fig["kind"] != "learning_curves":
            raise ValueError(f"figure {fig['id']}: task {task!r} has no corpus pair, or no data directory given")
        view = figure_view(fig, inputs, self.out_dir, learning_curve_pngs)
        view["heading"] = self.heading(fig["paper"], fig["title"], task)
        if view.get("missing") is not None:  # drawn from results that are not all there (a report made by hand)
            shown = self.shown(view.pop("missing"))
            view["unavailable"] = f"MISSING results: no {shown}"
            self.missed(shown, view.pop("missing_kind"))
        return view

    def speed_views(self, speed: dict[str, Path]) -> list[dict]:
        views = []
        for name, path in speed.items():
            if name not in SPEED_VIEWS:
                raise ConfigError(f"unknown benchmark {name!r} for the report (known: {', '.join(SPEED_VIEWS)})")
            build, _ = SPEED_VIEWS[name]
            views.append(build(path, self.out_dir, self.add_source(Path(path), "benchmark")))
        for name, (_, pngs) in SPEED_VIEWS.items():
            if name not in speed:  # a figure of an earlier report whose benchmark is gone
                for png in pngs:
                    (self.out_dir / png).unlink(missing_ok=True)
                self.not_included.append(
                    f"the {name} speed section: no {self.shown(self.results_dir / 'benchmarks' / f'{name}.json')}"
                )
        return views

    def html(
        self,
        preset_description: str,
        table_views: list,
        figure_views: list,
        speed_views: list,
        context: dict,
        claims_view: dict,
        deviations_view: dict,
        environment: dict,
    ) -> str:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        cview = _context_view(context)
        return env.get_template("index.html.j2").render(
            preset=str(self.preset),
            preset_description=str(preset_description or ""),
            reduced=(self.preset != "paper"),
            corpus_name=cview["corpus_name"],
            tables=table_views,
            table_headings={t["id"]: t["heading"]["text"] for t in table_views},
            claims=claims_view,
            deviations=deviations_view,
            environment=environment,
            figures=figure_views,
            speed=speed_views,
            systems=self.system_views,
            size_labels=list(SIZE_LABELS.values()),
            ctx=cview,
            sources=list(self.sources.values()),
            missing_files=self.missing_files,
            missing_count=missing_in_words(self.missing_kinds),
            not_included=self.not_included,
            problems=self.problems,
            partial=self.partial,
            results_base=self.shown_base,
            files=RUN_FILE_NAMES,
            dash=DASH,
        )
