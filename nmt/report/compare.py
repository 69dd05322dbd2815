"""One run's report against another's, usually a published reference (docs/reproductions/PRESET): table by table,
the numbers that differ by more than the spread between training seeds; claim by claim, the verdicts that differ
and the differences that fall outside the reference's interval.
Details: docs/internals/report.md."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from ..base.errors import InputError
from ..base.files import read_json
from ..records.report_files import CLAIMS_NAME, SUMMARY_NAME, read_claims, read_summary
from ..records.scores import preset_named, scores_files
from .claims import SINGLE_RUN, single_run_text
from .partial import runs_text

WITHIN, DIFFERS, NO_SPREAD, ONLY_RUN, ONLY_REFERENCE = (
    "within",
    "differs",
    "no spread",
    "only in run",
    "only in reference",
)
STATUSES = (WITHIN, DIFFERS, NO_SPREAD, ONLY_RUN, ONLY_REFERENCE)
BAND = 2.0  # standard errors of the difference: about 95%

_NUMBER = {"type": ["number", "null"]}
# What compare reads of a report's table files (the rest of each is the report's own business).
ROWS_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["label", "system", "status"],
        "properties": {
            "label": {"type": "string"},
            "system": {"type": ["string", "null"]},
            "status": {"type": "string"},
            "n_runs": {"type": ["integer", "null"], "minimum": 0},
            "n_planned": {"type": ["integer", "null"], "minimum": 0},
        },
        "patternProperties": {"^(ours|paper)_": _NUMBER},
    },
}


@dataclass(frozen=True)
class NumberComparison:
    table: str
    label: str
    system: str
    column: str
    run: float | None
    run_n: int
    reference: float | None
    reference_n: int
    run_planned: int  # the runs the side's preset plans (more than run_n in a partial run)
    reference_planned: int
    difference: float | None
    band: float | None  # how far the means may lie apart by seed variance alone
    status: str


@dataclass(frozen=True)
class ClaimComparison:
    id: str
    run_verdict: str | None
    reference_verdict: str | None
    run_delta: float | None
    reference_interval: tuple[float, float] | None
    inside: bool | None  # the run's difference inside the reference's 95% interval
    status: str


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _spread(record: dict, column: str) -> tuple[float | None, int]:
    """(the seeds' sample standard deviation or None, the number of runs) of a table row's column."""
    n = int(record.get("n_runs") or 1)
    return _number(record.get(f"ours_{column}_sd")), n


def _planned(record: dict | None) -> int:
    """The runs a row's preset plans (a report written before n_planned existed: the runs it has)."""
    if record is None:
        return 0
    return int(record.get("n_planned") or record.get("n_runs") or 1)


def seed_band(sd_a: float | None, n_a: int, sd_b: float | None, n_b: int) -> float | None:
    """BAND standard errors of the difference of two means of seed runs, from the pooled standard deviation of the
    sides that have one; None when neither has (single runs)."""
    known = [(sd, n) for sd, n in ((sd_a, n_a), (sd_b, n_b)) if sd is not None and n > 1]
    if not known:
        return None
    pooled = math.sqrt(sum((n - 1) * sd**2 for sd, n in known) / sum(n - 1 for _, n in known))
    return BAND * pooled * math.sqrt(1 / n_a + 1 / n_b)


REPORT_FILES = (SUMMARY_NAME, CLAIMS_NAME)  # what compare reads of every report, beside its tables' TABLE.json


def check_report(path: Path) -> None:
    """InputError, one line naming ``path`` and what it is, unless it is a directory `nmt report` wrote."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(
            f"{path}: {'not a directory' if path.exists() else 'no such directory'}; give the "
            "directory `nmt report --out` wrote (reports/PRESET, docs/reproductions/PRESET)"
        )
    absent = [name for name in REPORT_FILES if not (path / name).is_file()]
    if not absent:
        return
    results = next((where for where in (path / "results", path) if scores_files(where)), None)
    preset = (preset_named(results) if results is not None else None) or "PRESET"
    if len(absent) < len(REPORT_FILES):
        what = f"an incomplete report (no {absent[0]}); render it again with nmt report"
    elif results == path:
        what = (
            f"a results directory, not a report; render it first: nmt report --preset {preset} --results {path} "
            f"--data data/{preset} --out reports/{preset} (--partial for a run not all in)"
        )
    elif results is not None:
        what = (
            f"not a rendered report (no {SUMMARY_NAME}): it holds a run's results/; render them into it: nmt report "
            f"--preset {preset} --results {results} --data data/{preset} --out {path} --partial"
        )
    else:
        what = (
            f"not a rendered report (no {SUMMARY_NAME}); give the directory `nmt report --out` wrote "
            "(reports/PRESET, docs/reproductions/PRESET)"
        )
    raise InputError(f"{path}: {what}")


def _table_ids(report: Path) -> list[str]:
    return list(read_summary(report))


def _rows(report: Path, table: str) -> dict[str, dict]:
    path = report / f"{table}.json"  # a list of row records, not an object
    if not path.is_file():  # every table the summary names has one: a report missing it is damaged, not smaller
        raise InputError(
            f"{path}: missing, though {report / SUMMARY_NAME} names table {table}; render the report again"
        )
    records = read_json(path, "a report table", schema=ROWS_SCHEMA, top=list)
    return {r["system"]: r for r in records if r["system"] and r["status"] == "measured"}


def run_of(report: Path) -> dict:
    """The claims file's `run` (nmt.records.run_identity); for a report without one, {"preset": its preset or None}."""
    claims = read_claims(report)
    return claims.get("run") or {"preset": claims.get("preset")}


def _differences(a: dict, b: dict) -> list[str]:
    """How two runs' recipes differ where both reports show something: corpora first, then tables."""
    out = []
    corpora_a, corpora_b = a.get("corpora") or {}, b.get("corpora") or {}
    for task in [t for t in corpora_a if t in corpora_b]:
        if corpora_a[task]["digest"] != corpora_b[task]["digest"]:
            same = corpora_a[task]["corpus"] == corpora_b[task]["corpus"]
            out.append(
                f"the {task} corpus ({corpora_a[task]['corpus']} against {corpora_b[task]['corpus']}"
                f"{' with other settings' if same else ''})"
            )
    tables_a, tables_b = a.get("tables") or {}, b.get("tables") or {}
    shared = [t for t in tables_a if t in tables_b]
    if not shared and tables_a and tables_b:
        out.append("every table (none in common)")
    changed = [t for t in shared if tables_a[t] != tables_b[t]]
    if changed and not out:
        out.append(f"the settings of {', '.join(changed)}")
    elif changed:
        out.append(f"{len(changed)} of the {len(shared)} tables in common")
    return out


def check_comparable(run: Path, reference: Path, across_presets: bool = False) -> str | None:
    """None when the two reports are of one run recipe and one preset; a note (the comparison's first line) when
    they differ only in the preset's name, or when they differ and ``across_presets`` asks to compare them anyway;
    otherwise InputError, one line saying how they differ."""
    a, b = run_of(run), run_of(reference)
    preset_a, preset_b = a.get("preset"), b.get("preset")
    unrecorded = [str(report / CLAIMS_NAME) for report, r in ((run, a), (reference, b)) if "tables" not in r]
    unchecked = (
        (
            f"note: {' and '.join(unrecorded)} record{'s' if len(unrecorded) == 1 else ''} no run (its corpora "
            "and settings): whether the two were trained alike is not checked; render "
            f"{'it' if len(unrecorded) == 1 else 'them'} again with `nmt report`"
        )
        if unrecorded
        else None
    )
    if preset_a is None or preset_b is None:  # a report made by hand: nothing to tell them apart by
        return unchecked
    recorded = not unrecorded
    differences = _differences(a, b) if recorded else []
    if not differences and (preset_a == preset_b or recorded):
        if preset_a == preset_b:
            return unchecked
        shared = [t for t in a["tables"] if t in b["tables"]]
        return (
            f"note: presets {preset_a} and {preset_b} differ, but the {len(shared)} tables both reports show "
            "were trained alike (the same corpora and settings)"
        )
    presets = f"preset {preset_a}" if preset_a == preset_b else f"presets {preset_a} and {preset_b}"
    how = (
        f": they differ in {'; '.join(differences)}"
        if differences
        else " (a report without a run record: re-render it with `nmt report` to compare recipes)"
    )
    if not across_presets:
        raise InputError(
            f"{run} and {reference} are reports of {presets}{how}; their numbers differ by design, not "
            "by chance (--across-presets compares them anyway)"
        )
    return f"comparing across presets (--across-presets): {run} and {reference} are reports of {presets}{how}"


def compare_tables(run: Path, reference: Path) -> list[NumberComparison]:
    """Every measured number of the tables both reports have, and the rows only one side measured."""
    out = []
    run_tables = _table_ids(run)
    for table in _table_ids(reference):
        if table not in run_tables:
            continue
        mine, theirs = _rows(run, table), _rows(reference, table)
        for system in [*theirs, *(s for s in mine if s not in theirs)]:
            a, b = mine.get(system), theirs.get(system)
            record = a or b
            columns = [
                k[len("ours_") :] for k in record if k.startswith("ours_") and not k.endswith(("_sd", "_bp", "_ratio"))
            ]
            for column in columns:
                value_a = _number(a.get(f"ours_{column}")) if a else None
                value_b = _number(b.get(f"ours_{column}")) if b else None
                if value_a is None and value_b is None:
                    continue
                sd_a, n_a = _spread(a, column) if a else (None, 0)
                sd_b, n_b = _spread(b, column) if b else (None, 0)
                planned = {"run_planned": _planned(a), "reference_planned": _planned(b)}
                if value_a is None or value_b is None:
                    status = ONLY_REFERENCE if value_a is None else ONLY_RUN
                    out.append(
                        NumberComparison(
                            table,
                            record["label"],
                            system,
                            column,
                            value_a,
                            n_a,
                            value_b,
                            n_b,
                            **planned,
                            difference=None,
                            band=None,
                            status=status,
                        )
                    )
                    continue
                band = seed_band(sd_a, n_a, sd_b, n_b)
                difference = value_a - value_b
                status = NO_SPREAD if band is None else (WITHIN if abs(difference) <= band else DIFFERS)
                out.append(
                    NumberComparison(
                        table,
                        record["label"],
                        system,
                        column,
                        value_a,
                        n_a,
                        value_b,
                        n_b,
                        **planned,
                        difference=difference,
                        band=band,
                        status=status,
                    )
                )
    return out


def _verdict(claim: dict) -> str | None:
    """A claim's verdict as compared: a single-run claim's (no verdict) with the way it points."""
    if claim.get("verdict") == SINGLE_RUN:
        return single_run_text(claim.get("points"))
    return claim.get("verdict")


def _shown(ref: dict, claim: dict | None) -> tuple[dict, dict | None]:
    """The reference's shown comparison and the run's same one: for a claim of several comparisons, the one that
    decided the reference's verdict (``deciding``; ``weakest`` in a claims file from before it) on both sides, so
    that a difference is set against the interval of the same comparison; else the claims' own fields."""
    index = ref.get("deciding", ref.get("weakest"))
    theirs, ours = ref.get("comparisons") or [], (claim or {}).get("comparisons") or []
    if index is not None and len(theirs) > 1 and len(ours) == len(theirs) and index < len(theirs):
        return theirs[index], ours[index]
    return ref, claim


def compare_claims(run: Path, reference: Path) -> list[ClaimComparison]:
    """Each claim of the reference: the run's verdict beside it, and whether the run's difference lies inside the
    reference's 95% interval (of the same comparison: :func:`_shown`)."""
    mine = {c["id"]: c for c in read_claims(run).get("claims", [])}
    out = []
    for ref in read_claims(reference).get("claims", []):
        claim = mine.get(ref["id"])
        shown_ref, shown_run = _shown(ref, claim)
        interval = (
            (shown_ref["ci_low"], shown_ref["ci_high"])
            if shown_ref.get("ci_low") is not None and shown_ref.get("ci_high") is not None
            else None
        )
        delta = _number(shown_run.get("ours_delta")) if shown_run else None
        inside = None if delta is None or interval is None else interval[0] <= delta <= interval[1]
        if claim is None:
            status = ONLY_REFERENCE
        elif _verdict(claim) != _verdict(ref):
            status = DIFFERS
        else:
            status = WITHIN if inside in (True, None) else DIFFERS
        out.append(
            ClaimComparison(
                ref["id"], _verdict(claim) if claim else None, _verdict(ref), delta, interval, inside, status
            )
        )
    return out


def partial_notes(run: Path, reference: Path, numbers: list[NumberComparison]) -> list[str]:
    """A line for each side that is a partial run (the claims file's run.partial): how much of it is in, and of how many
    runs its rows are the means."""
    lines = []
    for side, path in (("run", run), ("reference", reference)):
        partial = run_of(path).get("partial")
        if not partial:
            continue
        shares = sorted(
            {
                (getattr(n, f"{side}_n"), getattr(n, f"{side}_planned"))
                for n in numbers
                if 0 < getattr(n, f"{side}_n") < getattr(n, f"{side}_planned")
            }
        )
        rows = ("; its rows are the means of " + " or ".join(runs_text(k, n) for k, n in shares)) if shares else ""
        lines.append(f"note: the {side} {path} is {partial['text']}{rows}; compared on the runs there are")
    return lines


def compare(run: Path, reference: Path, across_presets: bool = False) -> dict:
    """Both comparisons and their counts, as JSON-ready data; ``note``: what check_comparable said (or None);
    ``partial``: a line for each side that is a partial run."""
    for report in (run, reference):
        check_report(Path(report))
    note = check_comparable(Path(run), Path(reference), across_presets)
    numbers, claims = compare_tables(Path(run), Path(reference)), compare_claims(Path(run), Path(reference))
    return {
        "run": str(run),
        "reference": str(reference),
        "note": note,
        "partial": partial_notes(Path(run), Path(reference), numbers),
        "rule": f"|a - b| > {BAND:g} s sqrt(1/n_a + 1/n_b)",
        "numbers": [asdict(n) for n in numbers],
        "claims": [asdict(c) for c in claims],
        "counts": {"numbers": _counts(numbers), "claims": _counts(claims)},
    }


def _counts(items: list) -> dict[str, int]:
    """{status: how many}, in the order of STATUSES, of the statuses that occur."""
    found = Counter(item.status for item in items)
    return {status: found[status] for status in STATUSES if found[status]}


def _count(n: int, planned: int) -> str:
    """n=3, or in a partial run n=1 of 3."""
    return f"n={n}" + (f" of {planned}" if planned > n > 0 else "")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_comparison(result: dict, everything: bool = False) -> str:
    """The comparison as text: the numbers and claims that differ (every one with ``everything``), then counts."""
    lines = ([result["note"]] if result.get("note") else []) + list(result.get("partial") or [])
    lines.append(f"run {result['run']} against reference {result['reference']}; a number differs when {result['rule']}")
    for n in result["numbers"]:
        if everything or n["status"] not in (WITHIN, NO_SPREAD):
            lines.append(
                f"{n['table']}  {n['label']} [{n['column']}]: run {_fmt(n['run'])} "
                f"({_count(n['run_n'], n['run_planned'])}), reference {_fmt(n['reference'])} "
                f"({_count(n['reference_n'], n['reference_planned'])}), difference "
                f"{_fmt(n['difference'])}, band {_fmt(n['band'])}: {n['status']}"
            )
    for c in result["claims"]:
        if everything or c["status"] != WITHIN:
            interval = c["reference_interval"]
            shown = "-" if interval is None else f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"
            lines.append(
                f"claim {c['id']}: run {c['run_verdict']} ({_fmt(c['run_delta'])}), reference "
                f"{c['reference_verdict']} {shown}: {c['status']}"
            )
    unjudged = result["counts"]["numbers"].get(NO_SPREAD, 0)
    if unjudged and not everything:
        lines.append(
            f"{unjudged} numbers rest on single runs on both sides: no seed spread to judge them by (--all shows them)"
        )
    for what in ("numbers", "claims"):
        counts = ", ".join(f"{k} {v}" for k, v in result["counts"][what].items()) or "none in common"
        lines.append(f"{what}: {counts}")
    return "\n".join(lines)
