"""Claims files (``workflow/claims/*.yaml``): a paper's findings as data, each tied to the table it comes from.
Details: docs/internals/config.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.errors import ConfigError
from .claim_kinds import CLAIM_KINDS, ClaimKind
from .schema import first_violation, read_checked
from .table_files import KNOWN_COLUMNS

#: Which way a metric is better, for claims that do not say.
LOWER_IS_BETTER = (
    "ppl",
    "aer",
    "aer_pct",
    "saer",
    "saer_pct",
    "saer_hard",
    "saer_hard_pct",
    "aer_predicted",
    "aer_predicted_pct",
)


def metric_direction(metric: str) -> str:
    return "lower" if metric in LOWER_IS_BETTER else "higher"


def load_claims(path, tables: dict[str, dict], other_tables: set[str] = frozenset()) -> dict:
    """A validated claims file: ``{paper, path, claims: [...]}``, each claim with ``kind``, ``direction`` and
    ``pairs`` (the comparisons it is made of: ``{a, b, paper_delta}``, a and b terms as parsed values).

    ``tables``: {table id: parsed table (nmt.config.table_files.load_table)} of the preset; a claim on a table of
    ``other_tables`` (ids of table files the preset does not run) gets ``absent`` (why it cannot be judged) and is
    not checked further; a claim naming any other table, a system that is not one of its rows, or a field no scores
    file has is an error naming the file and the key (``claims[3].better[2]: ...``)."""
    path = Path(path)
    data = read_checked(path, "claims", "claims file")
    claims, ids = [], set()
    for i, raw in enumerate(data["claims"], start=1):
        where = f"{path}: claims[{i}] ({raw['id']})"
        claim = _parse_claim(raw, tables, other_tables, where)
        if claim["id"] in ids:
            raise ConfigError(f"{path}: claim id {claim['id']!r} is used twice")
        ids.add(claim["id"])
        claims.append({**claim, "paper": data["paper"]})
    return {"paper": data["paper"], "path": str(path), "claims": claims}


def _parse_claim(raw: dict, tables: dict[str, dict], other_tables: set[str], where: str) -> dict:
    kinds = [name for name in CLAIM_KINDS if name in raw]
    if len(kinds) != 1:
        raise ConfigError(
            f"{where}: a claim has exactly one of {', '.join(CLAIM_KINDS)} (found {', '.join(kinds) or 'none'})"
        )
    kind = CLAIM_KINDS[kinds[0]]
    problem = first_violation(raw, "claims", kind.definition)
    if problem:
        raise ConfigError(f"{where}: {problem}")
    claim = {
        "id": raw["id"],
        "claim": raw["claim"],
        "where": raw["where"],
        "kind": kind.name,
        "paper_note": raw.get("paper_note"),
        "table": raw.get("table"),
        "metric": raw.get("metric"),
        "operationalisation": raw.get("operationalisation"),
        "substitute": raw.get("substitute"),
        "check": raw.get("check"),
        "margin_basis": None,
        "margin_why": None,
        "absent": None,
    }
    parse = {"table": _table_claim, "benchmark": _benchmark_claim}[kind.evidence]
    return parse(raw, claim, kind, tables, other_tables, where)


def _benchmark_claim(
    raw: dict, claim: dict, kind: ClaimKind, tables: dict[str, dict], other_tables: set[str], where: str
) -> dict:
    low, high = raw[kind.name]["lengths"]
    if low > high:
        raise ConfigError(f"{where}: {kind.name}.lengths: {low} > {high}")
    return {
        **claim,
        kind.name: dict(raw[kind.name]),
        "direction": "higher",
        "pairs": [],
        "paper_delta": raw.get("paper_delta"),
    }


def _table_claim(
    raw: dict, claim: dict, kind: ClaimKind, tables: dict[str, dict], other_tables: set[str], where: str
) -> dict:
    """A claim comparing values of a table's rows: its pairs A vs B (the kind's ``pairs``), each with the paper's
    difference from the table."""
    table = tables.get(raw["table"])
    if table is None and raw["table"] in other_tables:
        return {
            **claim,
            "absent": f"the preset does not run table {raw['table']}",
            "direction": raw.get("direction") or metric_direction(raw["metric"]),
            "pairs": [],
            "paper_delta": raw.get("paper_delta"),
            "margin": None,
        }
    if table is None:
        raise ConfigError(
            f"{where}: table: {raw['table']!r} is not one of the preset's tables ({', '.join(sorted(tables))})"
        )
    if raw["metric"] not in KNOWN_COLUMNS:
        raise ConfigError(
            f"{where}: metric: {raw['metric']!r} is not a scores field ({', '.join(sorted(KNOWN_COLUMNS))})"
        )
    metric = raw["metric"]
    spec = raw[kind.name]
    pairs = kind.pairs(spec, lambda term, at: _parse_term(term, table, metric, at), f"{where}: {kind.name}")
    direction = raw.get("direction") or metric_direction(metric)
    sign = 1 if direction == "higher" else -1
    out_pairs = []
    for a, b in pairs:
        paper = None if a["paper"] is None or b["paper"] is None else round(a["paper"] - b["paper"], 6)
        if paper is not None and kind.directional and sign * paper <= 0:
            raise ConfigError(
                f"{where}: the table's paper values do not say this: {a['text']} - {b['text']} = "
                f"{paper:+.3g}, but the claim says {a['text']} is {direction} (better)"
            )
        out_pairs.append({"a": a, "b": b, "paper_delta": paper})
    paper_delta = (
        raw["paper_delta"] if "paper_delta" in raw else (out_pairs[0]["paper_delta"] if len(out_pairs) == 1 else None)
    )
    margin = {key: spec[key] for key in ("margin", "margin_basis", "margin_why")} if kind.margin else {"margin": None}
    return {**claim, "direction": direction, "pairs": out_pairs, "paper_delta": paper_delta, **margin}


def _parse_term(term: Any, table: dict, metric: str, where: str) -> dict:
    """``{text, values: [(system, field), ...], signs: [+1, -1 ...], paper}``: a value or a gain, its paper value
    from the table's rows (None where the paper gives none). A ``best_on_dev`` term has no values yet: ``choose``
    ({ensemble, members, field}) says what the judge picks them from."""
    if isinstance(term, dict) and "best_on_dev" in term:
        ensemble, field = term["best_on_dev"], term.get("field") or metric
        spec = (table.get("ensembles") or {}).get(ensemble)
        if spec is None or len(spec["members"]) < 2:
            raise ConfigError(f"{where}: best_on_dev: {ensemble!r} is not an ensemble of table {table['id']}")
        if field not in KNOWN_COLUMNS:
            raise ConfigError(f"{where}: best_on_dev: field {field!r} is not a scores field")
        suffix = "" if field == metric else f".{field}"
        return {
            "text": f"best member of {ensemble} on dev{suffix}",
            "values": [],
            "signs": [1],
            "paper": None,
            "choose": {"ensemble": ensemble, "members": list(spec["members"]), "field": field, "suffix": suffix},
        }
    if isinstance(term, dict) and "mean" in term:
        members = [_parse_term(t, table, metric, f"{where}.mean[{k}]") for k, t in enumerate(term["mean"], start=1)]
        k = len(members)
        paper = None if any(m["paper"] is None for m in members) else round(sum(m["paper"] for m in members) / k, 6)
        return {
            "text": "mean of " + ", ".join(m["text"] for m in members),
            "values": [v for m in members for v in m["values"]],
            "signs": [sign / k for m in members for sign in m["signs"]],
            "paper": paper,
        }
    if isinstance(term, dict):
        parts = [_parse_value(v, table, metric, f"{where}.gain[{k}]") for k, v in enumerate(term["gain"], start=1)]
        paper = None if any(p["paper"] is None for p in parts) else round(parts[0]["paper"] - parts[1]["paper"], 6)
        return {
            "text": f"({parts[0]['text']} - {parts[1]['text']})",
            "values": [p["value"] for p in parts],
            "signs": [1, -1],
            "paper": paper,
        }
    part = _parse_value(term, table, metric, where)
    return {"text": part["text"], "values": [part["value"]], "signs": [1], "paper": part["paper"]}


def _parse_value(text: str, table: dict, metric: str, where: str) -> dict:
    system, _, field = text.partition(".")
    field = field or metric
    if field not in KNOWN_COLUMNS:
        raise ConfigError(f"{where}: {text!r}: {field!r} is not a scores field")
    rows = [row for row in table["rows"] if row["system"] == system]
    if not rows:
        known = sorted({row["system"] for row in table["rows"] if row["system"] is not None})
        raise ConfigError(f"{where}: unknown system {system!r}: not a row of table {table['id']} ({', '.join(known)})")
    paper = None
    for row in rows:
        for column in table["columns"]:
            if row["values_from"].get(column, column) == field and column in row["paper"]:
                paper = row["paper"][column]
    return {"value": (system, field), "paper": paper, "text": system if field == metric else f"{system}.{field}"}
