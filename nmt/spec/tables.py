"""Paper table files (``workflow/tables/*.yaml``): parse and validate.

A table file is the one source of truth for what a paper table trains (``systems``) and what the paper
reported (``rows``). The workflow engines read the systems through :mod:`nmt.config`; the report joins the
rows with the scores files (:mod:`nmt.report.tables`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from ..data.alignments import DEFAULT_SYMMETRIZE, SYMMETRIZE_METHODS
from ..eflomal_runner import DEFAULT_MODEL

#: Metric columns a table may show, in display order, with their human labels.
COLUMN_LABELS: dict[str, str] = {
    "ppl": "ppl",
    "bleu_tok": "BLEU (tok)",
    "bleu_detok": "BLEU (detok)",
    "bleu_tok_unk": "BLEU (tok, +unk repl.)",
    "bleu_detok_unk": "BLEU (detok, +unk repl.)",
    "aer": "AER",
    "aer_predicted": "AER (a_t to y_t)",
    "saer": "SAER",
    "aer_pct": "AER %",
    "saer_pct": "SAER %",
    "saer_hard": "SAER (hard)",
    "saer_hard_pct": "SAER % (hard)",
    "aer_predicted_pct": "AER % (a_t to y_t)",
    "precision": "precision",
    "recall": "recall",
}
KNOWN_COLUMNS = frozenset(COLUMN_LABELS)
#: Columns whose scores file carries a sacreBLEU signature under ``{column}_signature``.
BLEU_COLUMNS = frozenset(c for c in COLUMN_LABELS if c.startswith("bleu"))

REQUIRED_KEYS = ("id", "title", "paper", "task", "testset", "columns", "systems", "rows")
OPTIONAL_KEYS = ("ensembles", "decodings", "alignment", "recipe", "needs")
ALIGNMENT_KEYS = ("uses", "aligners", "reverse_task", "symmetrize")
ALIGNER_KEYS = ("tool", "model", "symmetrize")
ALIGNER_TOOLS = ("eflomal",)
ROW_REQUIRED_KEYS = ("label", "system", "paper")
ROW_OPTIONAL_KEYS = ("requires", "note", "values_from")
ENSEMBLE_COMBINATIONS = ("prob", "logprob")
MONOTONIC_MODES = ("soft", "hard")

# ids end up in file names (``{system}.{testset}.json``, ``{table_id}.csv``)
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_id(value: Any, what: str, where: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise ValueError(
            f"{where}: {what} must be a non-empty string of letters, digits, '_', '.', '+', '-' "
            f"(got {value!r})"
        )
    return value


def _parse_ensembles(ensembles: Any, systems: dict, where: str) -> dict[str, dict]:
    """``ensembles: {id: {members: [system ids], combine: prob|logprob}}``: systems decoded together
    (nmt.models.ensemble); they train nothing of their own. Members may be trained by another table of the
    same task (Luong et al.'s ensemble mixes Table 1 and Table 4 systems): that they exist is checked over the
    preset's tables (nmt.pipeline.plan.collect_ensembles)."""
    if ensembles is None:
        return {}
    if not isinstance(ensembles, dict):
        raise ValueError(f"{where}: 'ensembles' must be a mapping of ensemble id -> members")
    out = {}
    for eid, spec in ensembles.items():
        _check_id(eid, f"ensemble id {eid!r}", where)
        if eid in systems:
            raise ValueError(f"{where}: {eid!r} is both a system and an ensemble")
        if not isinstance(spec, dict) or set(spec) - {"members", "combine"}:
            raise ValueError(f"{where}: ensembles.{eid} must be a mapping with 'members' (and optionally 'combine')")
        members = spec.get("members")
        if not isinstance(members, list) or len(set(members)) < 2:
            raise ValueError(f"{where}: ensembles.{eid}.members must list at least two systems")
        for member in members:
            _check_id(member, f"ensembles.{eid} member {member!r}", where)
        if len(set(members)) != len(members):
            raise ValueError(f"{where}: ensembles.{eid}.members lists a system twice")
        combine = spec.get("combine", "prob")
        if combine not in ENSEMBLE_COMBINATIONS:
            raise ValueError(f"{where}: ensembles.{eid}.combine must be one of {', '.join(ENSEMBLE_COMBINATIONS)}")
        out[eid] = {"members": list(members), "combine": combine}
    return out


def _parse_decodings(decodings: Any, systems: dict, ensembles: dict, where: str) -> dict[str, dict]:
    """``decodings: {id: {system: S, beam: N, monotonic: soft|hard}}``: a trained system decoded differently from
    the preset's ``translate`` settings (Raffel et al.: greedy, and monotonic attention by its soft expected
    alignment or by the hard linear-time process). Like an ensemble it trains nothing; it is kept in the same
    mapping, as an ensemble of one member with decoding options (nmt.pipeline.plan.collect_ensembles checks that S is
    trained for the task)."""
    if decodings is None:
        return {}
    if not isinstance(decodings, dict):
        raise ValueError(f"{where}: 'decodings' must be a mapping of decoding id -> {{system, beam, monotonic}}")
    out = {}
    for did, spec in decodings.items():
        _check_id(did, f"decoding id {did!r}", where)
        if did in systems or did in ensembles:
            raise ValueError(f"{where}: {did!r} is both a decoding and a system or ensemble")
        if not isinstance(spec, dict) or "system" not in spec or set(spec) - {"system", "beam", "monotonic"}:
            raise ValueError(f"{where}: decodings.{did} must be a mapping with 'system' and optionally 'beam', "
                             f"'monotonic'")
        _check_id(spec["system"], f"decodings.{did}.system", where)
        decode = {}
        if "beam" in spec:
            if not isinstance(spec["beam"], int) or isinstance(spec["beam"], bool) or spec["beam"] < 1:
                raise ValueError(f"{where}: decodings.{did}.beam must be an integer >= 1 (got {spec['beam']!r})")
            decode["beam"] = spec["beam"]
        if "monotonic" in spec:
            if spec["monotonic"] not in MONOTONIC_MODES:
                raise ValueError(f"{where}: decodings.{did}.monotonic must be one of {', '.join(MONOTONIC_MODES)} "
                                 f"(got {spec['monotonic']!r})")
            decode["monotonic"] = spec["monotonic"]
        if not decode:
            raise ValueError(f"{where}: decodings.{did} changes nothing: give 'beam' or 'monotonic' "
                             f"(or use the system {spec['system']!r} itself)")
        out[did] = {"members": [spec["system"]], "combine": None, "decode": decode}
    return out


def _parse_alignment(spec: Any, systems: dict, ensembles: dict, task: str, where: str) -> dict | None:
    """``alignment:`` makes the table an alignment table: its rows are scored with AER/SAER against the gold
    links of the task's ``testset`` split instead of being translated (nmt.align). Keys:
      uses          systems or ensembles of other tables of the same task whose alignments the rows show
                    (checked over the preset by nmt.pipeline.plan.collect_alignments);
      aligners      statistical baselines, {id: {tool: eflomal, model: 1|2|3, symmetrize: METHOD}}, trained on
                    the task's training data plus the test sentences, as the papers' baselines were;
      reverse_task  also align with the same-named systems of this task (trained for it too) and merge the two
                    directions with ``symmetrize`` (Peter et al.: Och's refined method)."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or set(spec) - set(ALIGNMENT_KEYS):
        raise ValueError(f"{where}: 'alignment' must be a mapping with keys among {', '.join(ALIGNMENT_KEYS)}")
    uses = spec.get("uses") or []
    if not isinstance(uses, list):
        raise ValueError(f"{where}: alignment.uses must be a list of system ids")
    for name in uses:
        _check_id(name, f"alignment.uses entry {name!r}", where)
        if name in systems or name in ensembles:
            raise ValueError(f"{where}: alignment.uses lists {name!r}, which this table defines itself")
    aligners = spec.get("aligners") or {}
    if not isinstance(aligners, dict):
        raise ValueError(f"{where}: alignment.aligners must be a mapping of aligner id -> settings")
    norm_aligners = {}
    for aid, settings in aligners.items():
        _check_id(aid, f"aligner id {aid!r}", where)
        if aid in systems or aid in ensembles or aid in uses:
            raise ValueError(f"{where}: {aid!r} is both an aligner and a system")
        if not isinstance(settings, dict) or set(settings) - set(ALIGNER_KEYS):
            raise ValueError(f"{where}: alignment.aligners.{aid} must be a mapping with keys among "
                             f"{', '.join(ALIGNER_KEYS)}")
        norm = {"tool": settings.get("tool", "eflomal"), "model": settings.get("model", DEFAULT_MODEL),
                "symmetrize": settings.get("symmetrize", DEFAULT_SYMMETRIZE)}
        if norm["tool"] not in ALIGNER_TOOLS:
            raise ValueError(f"{where}: alignment.aligners.{aid}.tool must be one of {', '.join(ALIGNER_TOOLS)}")
        if norm["model"] not in (1, 2, 3):
            raise ValueError(f"{where}: alignment.aligners.{aid}.model must be 1, 2 or 3 (got {norm['model']!r})")
        if norm["symmetrize"] not in SYMMETRIZE_METHODS:
            raise ValueError(f"{where}: alignment.aligners.{aid}.symmetrize must be one of "
                             f"{', '.join(SYMMETRIZE_METHODS)}")
        norm_aligners[aid] = norm
    reverse_task = spec.get("reverse_task")
    if reverse_task is not None and (not isinstance(reverse_task, str) or reverse_task == task):
        raise ValueError(f"{where}: alignment.reverse_task must name the other direction's task (got {reverse_task!r})")
    symmetrize = spec.get("symmetrize", "refined" if reverse_task else None)
    if reverse_task and symmetrize not in SYMMETRIZE_METHODS:
        raise ValueError(f"{where}: alignment.symmetrize must be one of {', '.join(SYMMETRIZE_METHODS)}")
    if symmetrize is not None and not reverse_task:
        raise ValueError(f"{where}: alignment.symmetrize merges two directions: it needs alignment.reverse_task")
    return {"uses": list(uses), "aligners": norm_aligners, "reverse_task": reverse_task, "symmetrize": symmetrize}


def load_table(path) -> dict:
    """Parse and validate a table YAML file; return a normalised copy of its content.

    Raises ``ValueError`` naming the file and the offending key or row.
    Normalisation: ``systems`` entries that are null become ``{}``; each row gets
    ``requires``/``note`` (``None`` when absent) and ``paper`` values as floats.
    """
    where = str(path)
    data = _read_mapping(Path(path))
    _check_header(data, where)
    columns = _check_columns(data["columns"], where)
    systems = _parse_systems(data["systems"], where)
    ensembles = _parse_ensembles(data.get("ensembles"), systems, where)
    ensembles.update(_parse_decodings(data.get("decodings"), systems, ensembles, where))
    alignment = _parse_alignment(data.get("alignment"), systems, ensembles, data["task"], where)
    row_systems = [*systems, *ensembles]
    if alignment:
        row_systems += [*alignment["uses"], *alignment["aligners"]]
    rows = data["rows"]
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{where}: 'rows' must be a non-empty list")
    return {**data, "columns": columns, "systems": systems, "ensembles": ensembles, "alignment": alignment,
            "recipe": data.get("recipe"), "needs": data.get("needs"),
            "rows": [_parse_row(row, i, columns, row_systems, bool(alignment), where)
                     for i, row in enumerate(rows, start=1)]}


def _read_mapping(path: Path) -> dict:
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{where}: cannot read table file: {e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"{where}: invalid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a table file must be a mapping, got {type(data).__name__}")
    return data


def _check_header(data: dict, where: str) -> None:
    """The table's keys, and its id, title, paper, task, test set, recipe and needs."""
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ValueError(f"{where}: missing required key(s): {', '.join(missing)}")
    unknown_keys = sorted(set(data) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown_keys:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown_keys))}; allowed: "
                         f"{', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}")
    _check_id(data["id"], "'id'", where)
    for key in ("title", "paper", "task", "testset"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise ValueError(f"{where}: '{key}' must be a non-empty string (got {data[key]!r})")
    _check_id(data["testset"], "'testset'", where)
    if data.get("recipe") is not None:
        _check_id(data["recipe"], "'recipe'", where)
    if data.get("needs") is not None:  # another table's id: this one can only run where that one can
        _check_id(data["needs"], "'needs'", where)


def _check_columns(columns: Any, where: str) -> list[str]:
    if not isinstance(columns, list) or not columns:
        raise ValueError(f"{where}: 'columns' must be a non-empty list (got {columns!r})")
    for c in columns:
        if c not in KNOWN_COLUMNS:
            raise ValueError(
                f"{where}: unknown column {c!r} in 'columns'; allowed: {', '.join(COLUMN_LABELS)}"
            )
    if len(set(columns)) != len(columns):
        raise ValueError(f"{where}: duplicate entries in 'columns': {columns!r}")
    return list(columns)


def _parse_systems(systems: Any, where: str) -> dict[str, dict]:
    """{system id: config overrides} (null overrides become {})."""
    if systems is None:
        systems = {}
    if not isinstance(systems, dict):
        raise ValueError(f"{where}: 'systems' must be a mapping of system id -> overrides")
    norm_systems: dict[str, dict] = {}
    for sid, overrides in systems.items():
        _check_id(sid, f"system id {sid!r} in 'systems'", where)
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            raise ValueError(
                f"{where}: systems.{sid} must be a mapping of config overrides "
                f"(got {type(overrides).__name__})"
            )
        norm_systems[sid] = overrides
    return norm_systems


def _parse_row(row: Any, i: int, columns: list[str], row_systems: list[str], alignment: bool, where: str) -> dict:
    """Row ``i``: its label, system (one the table defines), the paper's values and how ours are read."""
    rwhere = f"{where}: row {i}"
    if not isinstance(row, dict):
        raise ValueError(f"{rwhere}: must be a mapping (got {row!r})")
    label = row.get("label")
    if isinstance(label, str) and label.strip():
        rwhere = f"{rwhere} ({label!r})"
    missing = [k for k in ROW_REQUIRED_KEYS if k not in row]
    if missing:
        raise ValueError(f"{rwhere}: missing required key(s): {', '.join(missing)}")
    unknown = sorted(k for k in row if k not in ROW_REQUIRED_KEYS + ROW_OPTIONAL_KEYS)
    if unknown:
        raise ValueError(
            f"{rwhere}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
            f"{', '.join(ROW_REQUIRED_KEYS + ROW_OPTIONAL_KEYS)}"
        )
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"{rwhere}: 'label' must be a non-empty string (got {label!r})")
    system = row["system"]
    if system is not None:
        if not isinstance(system, str):
            raise ValueError(f"{rwhere}: 'system' must be a string or null (got {system!r})")
        if system not in row_systems:
            raise ValueError(
                f"{rwhere}: unknown system {system!r}; it is not defined in 'systems', 'ensembles', 'decodings'"
                f"{', alignment.uses or alignment.aligners' if alignment else ''} "
                f"({', '.join(row_systems) or 'none defined'})"
            )
    requires = row.get("requires")
    if requires is not None and (not isinstance(requires, str) or not requires.strip()):
        raise ValueError(f"{rwhere}: 'requires' must be a non-empty string (got {requires!r})")
    note = row.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError(f"{rwhere}: 'note' must be a string (got {note!r})")
    return {"label": label, "system": system, "paper": _parse_paper_values(row["paper"], columns, rwhere),
            "requires": requires, "note": note,
            "values_from": _check_values_from(row.get("values_from") or {}, columns, rwhere)}


def _parse_paper_values(paper: Any, columns: list[str], rwhere: str) -> dict[str, float]:
    if paper is None:
        paper = {}
    if not isinstance(paper, dict):
        raise ValueError(f"{rwhere}: 'paper' must be a mapping of column -> number")
    norm_paper: dict[str, float] = {}
    for c, v in paper.items():
        if c not in columns:
            raise ValueError(
                f"{rwhere}: paper key {c!r} is not one of the table's columns {columns!r}"
            )
        if not is_number(v):
            raise ValueError(f"{rwhere}: paper.{c} must be a number (got {v!r})")
        norm_paper[c] = float(v)
    return norm_paper


def _check_values_from(values_from: Any, columns: list[str], rwhere: str) -> dict:
    """A row's {column: scores field} (a null field: the column is not shown for the row)."""
    if not isinstance(values_from, dict):
        raise ValueError(f"{rwhere}: 'values_from' must map a column to a scores field (got {values_from!r})")
    for c, field in values_from.items():
        if c in columns and field is None:  # not shown for this row (e.g. ppl of a "+ unk replace" row)
            continue
        if c not in columns or field not in KNOWN_COLUMNS:
            raise ValueError(f"{rwhere}: values_from.{c}: {field!r} - both must be known columns "
                             f"({', '.join(COLUMN_LABELS)}), the first one of this table's, or the "
                             f"second null (not shown)")
    return dict(values_from)
