"""Claims files (``workflow/claims/*.yaml``): a paper's findings as data, each tied to the table it comes from.

A claim compares values of one table's rows: ``SYSTEM`` (its scores file's ``metric`` field) or ``SYSTEM.FIELD``
(another field, e.g. ``bleu_tok_unk``), ``{gain: [A, B]}`` (A minus B), ``{mean: [T1, T2, ...]}`` (the mean of
values or gains: one model against the others as a group), or ``{best_on_dev: ENSEMBLE}`` (the member of one of the
table's ensembles with the lowest dev perplexity, chosen when the claim is judged). Its kind says how:

- ``better: [A, B]``        A beats B (``direction``: higher or lower is better; by default the metric's);
- ``best: [A, B, C, ...]``  A beats each of the others;
- ``order: [A, B, C, ...]`` each beats the next;
- ``each_better: [[A, B], [C, D], ...]``  A beats B and C beats D;
- ``within: {values: [A, B], margin: m}``  A is worse than B by less than m;
- ``equal: {values: [A, B], margin: m}``   A and B differ by less than m;
- ``speedup: {benchmark, lengths}``         a benchmark's speed-up exceeds 1 in every cell within the lengths.

A margin says where it comes from (``margin_basis``: paper or derived, and ``margin_why``); ``operationalisation``
records where and why the test differs from the paper's sentence, ``substitute`` a stand-in for a tool the paper
used, and ``check`` marks a test the paper does not state (why we make it): it is reported among "our checks",
outside the family of the papers' claims. Each claim is reduced here to its pairwise comparisons (``pairs``), whose paper differences come from the
table's ``paper`` values (or the claim's own ``paper_delta`` where the paper's numbers are not in a table). The
verdicts are the report's job (nmt.report.claims).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.errors import ConfigError
from .schema import first_violation, read_checked
from .table_files import KNOWN_COLUMNS

COMPARED_KINDS = ("better", "best", "order", "each_better", "within", "equal")
KINDS = (*COMPARED_KINDS, "speedup")
#: Which way a metric is better, for claims that do not say.
LOWER_IS_BETTER = ("ppl", "aer", "aer_pct", "saer", "saer_pct", "saer_hard", "saer_hard_pct", "aer_predicted",
                   "aer_predicted_pct")


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
    kinds = [k for k in KINDS if k in raw]
    if len(kinds) != 1:
        raise ConfigError(f"{where}: a claim has exactly one of {', '.join(KINDS)} (found {', '.join(kinds) or 'none'})")
    kind = kinds[0]
    definition = "speedup" if kind == "speedup" else "compared"
    problem = first_violation(raw, "claims", definition)
    if problem:
        raise ConfigError(f"{where}: {problem}")
    claim = {"id": raw["id"], "claim": raw["claim"], "where": raw["where"], "kind": kind,
             "paper_note": raw.get("paper_note"), "table": raw.get("table"), "metric": raw.get("metric"),
             "operationalisation": raw.get("operationalisation"), "substitute": raw.get("substitute"),
             "check": raw.get("check"), "margin_basis": None, "margin_why": None, "absent": None}
    if kind == "speedup":
        low, high = raw["speedup"]["lengths"]
        if low > high:
            raise ConfigError(f"{where}: speedup.lengths: {low} > {high}")
        return {**claim, "speedup": dict(raw["speedup"]), "direction": "higher", "pairs": [],
                "paper_delta": raw.get("paper_delta")}
    table = tables.get(raw["table"])
    if table is None and raw["table"] in other_tables:
        return {**claim, "absent": f"the preset does not run table {raw['table']}", "direction":
                raw.get("direction") or metric_direction(raw["metric"]), "pairs": [],
                "paper_delta": raw.get("paper_delta"), "margin": None}
    if table is None:
        raise ConfigError(f"{where}: table: {raw['table']!r} is not one of the preset's tables "
                         f"({', '.join(sorted(tables))})")
    if raw["metric"] not in KNOWN_COLUMNS:
        raise ConfigError(f"{where}: metric: {raw['metric']!r} is not a scores field "
                         f"({', '.join(sorted(KNOWN_COLUMNS))})")
    metric = raw["metric"]
    spec = raw[kind]
    if kind == "each_better":
        pairs = [tuple(_parse_term(term, table, metric, f"{where}: each_better[{i}][{j}]")
                       for j, term in enumerate(pair, start=1)) for i, pair in enumerate(spec, start=1)]
    else:
        listed = spec["values"] if kind in ("within", "equal") else spec
        key = f"{kind}.values" if kind in ("within", "equal") else kind
        terms = [_parse_term(term, table, metric, f"{where}: {key}[{j}]") for j, term in enumerate(listed, start=1)]
        if kind in ("better", "within", "equal"):
            pairs = [(terms[0], terms[1])]
        elif kind == "best":
            pairs = [(terms[0], other) for other in terms[1:]]
        else:  # order
            pairs = list(zip(terms, terms[1:]))
    direction = raw.get("direction") or metric_direction(metric)
    sign = 1 if direction == "higher" else -1
    out_pairs = []
    for a, b in pairs:
        paper = None if a["paper"] is None or b["paper"] is None else round(a["paper"] - b["paper"], 6)
        if paper is not None and kind in ("better", "best", "order", "each_better") and sign * paper <= 0:
            raise ConfigError(f"{where}: the table's paper values do not say this: {a['text']} - {b['text']} = "
                             f"{paper:+.3g}, but the claim says {a['text']} is {direction} (better)")
        out_pairs.append({"a": a, "b": b, "paper_delta": paper})
    paper_delta = raw["paper_delta"] if "paper_delta" in raw else (
        out_pairs[0]["paper_delta"] if len(out_pairs) == 1 else None)
    margin = {key: spec[key] for key in ("margin", "margin_basis", "margin_why")} if kind in ("within", "equal") \
        else {"margin": None}
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
        return {"text": f"best member of {ensemble} on dev{suffix}", "values": [], "signs": [1], "paper": None,
                "choose": {"ensemble": ensemble, "members": list(spec["members"]), "field": field, "suffix": suffix}}
    if isinstance(term, dict) and "mean" in term:
        members = [_parse_term(t, table, metric, f"{where}.mean[{k}]") for k, t in enumerate(term["mean"], start=1)]
        k = len(members)
        paper = None if any(m["paper"] is None for m in members) else round(sum(m["paper"] for m in members) / k, 6)
        return {"text": "mean of " + ", ".join(m["text"] for m in members),
                "values": [v for m in members for v in m["values"]],
                "signs": [sign / k for m in members for sign in m["signs"]], "paper": paper}
    if isinstance(term, dict):
        parts = [_parse_value(v, table, metric, f"{where}.gain[{k}]") for k, v in enumerate(term["gain"], start=1)]
        paper = None if any(p["paper"] is None for p in parts) else round(parts[0]["paper"] - parts[1]["paper"], 6)
        return {"text": f"({parts[0]['text']} - {parts[1]['text']})", "values": [p["value"] for p in parts],
                "signs": [1, -1], "paper": paper}
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
        raise ConfigError(f"{where}: unknown system {system!r}: not a row of table {table['id']} "
                         f"({', '.join(known)})")
    paper = None
    for row in rows:
        for column in table["columns"]:
            if row["values_from"].get(column, column) == field and column in row["paper"]:
                paper = row["paper"][column]
    return {"value": (system, field), "paper": paper, "text": system if field == metric else f"{system}.{field}"}
