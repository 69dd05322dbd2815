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

from ..base.eflomal_runner import DEFAULT_MODEL
from ..base.errors import ConfigError
from ..data.alignments import DEFAULT_SYMMETRIZE
from .schema import read_checked

#: Metric columns a table may show, in display order, with their human labels.
COLUMN_LABELS: dict[str, str] = {
    "ppl": "ppl",
    "bleu_tok": "BLEU (tok)",
    "bleu_detok": "BLEU (detok)",
    "bleu_tok_unk": "BLEU (tok, +unk repl.)",
    "bleu_detok_unk": "BLEU (detok, +unk repl.)",
    "chrf": "chrF2",
    "chrf_unk": "chrF2 (+unk repl.)",
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
#: BLEU columns: the scores file carries sacreBLEU's signature and length diagnostics of each.
BLEU_COLUMNS = frozenset(c for c in COLUMN_LABELS if c.startswith("bleu"))
#: Columns whose scores file carries a sacreBLEU signature under ``{column}_signature`` (BLEU and chrF).
SIGNED_COLUMNS = BLEU_COLUMNS | {"chrf", "chrf_unk"}

ENSEMBLE_COMBINATIONS = ("prob", "logprob")
MONOTONIC_MODES = ("soft", "hard")
ALIGNER_TOOLS = ("eflomal",)
ALIGNER_MODELS = (1, 2, 3)


#: The names the workflow gives a system's runs with its other seeds (nmt.config.seed_run): not a system's name.
SEED_RUN_NAME = re.compile(r"^[A-Za-z0-9_]+_seed[0-9]+$")


def is_number(x: Any) -> bool:
    """A finite number (not a bool, not NaN or infinite, not an integer too large for a float)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an int beyond a float's range
        return False


def load_table(path) -> dict:
    """Parse and validate a table YAML file; return a normalised copy of its content.

    Raises ``ValueError`` naming the file and the offending key or row: first what schemas/tables.schema.yaml
    says of each key, then what refers to what.
    Normalisation: ``systems`` entries that are null become ``{}``; each row gets
    ``requires``/``note`` (``None`` when absent) and ``paper`` values as floats.
    """
    where = str(path)
    data = read_checked(Path(path), "tables", "table file")
    columns = list(data["columns"])
    systems = {sid: overrides or {} for sid, overrides in (data["systems"] or {}).items()}
    for sid in systems:
        if SEED_RUN_NAME.match(sid):
            raise ConfigError(
                f"{where}: systems.{sid}: a name ending in _seedN is a seed run's (train.seeds); rename the system"
            )
    ensembles = _parse_ensembles(data.get("ensembles"), systems, where)
    ensembles.update(_parse_decodings(data.get("decodings"), systems, ensembles, where))
    alignment = _parse_alignment(data.get("alignment"), systems, ensembles, data["task"], where)
    named = {f"{'decodings' if spec.get('decode') else 'ensembles'}.{name}": name for name, spec in ensembles.items()}
    named.update({f"alignment.aligners.{name}": name for name in (alignment or {}).get("aligners") or {}})
    for key, name in named.items():  # they have seed runs too (nmt.config.plan.collect_ensembles, aligner_runs)
        if SEED_RUN_NAME.match(name):
            raise ConfigError(f"{where}: {key}: a name ending in _seedN is a seed run's (train.seeds); rename it")
    row_systems = [*systems, *ensembles]
    if alignment:
        row_systems += [*alignment["uses"], *alignment["aligners"]]
    return {
        **data,
        "columns": columns,
        "systems": systems,
        "ensembles": ensembles,
        "alignment": alignment,
        "recipe": data.get("recipe"),
        "needs": data.get("needs"),
        "deviations": list(data.get("deviations") or []),
        "rows": [
            _parse_row(row, i, columns, row_systems, bool(alignment), where)
            for i, row in enumerate(data["rows"], start=1)
        ],
    }


def _parse_ensembles(ensembles: dict | None, systems: dict, where: str) -> dict[str, dict]:
    """``ensembles: {id: {members: [system ids], combine: prob|logprob}}``: systems decoded together
    (nmt.models.ensemble); they train nothing of their own. Members may be trained by another table of the
    same task (Luong et al.'s ensemble mixes Table 1 and Table 4 systems): that they exist is checked over the
    preset's tables (nmt.config.plan.collect_ensembles)."""
    out = {}
    for eid, spec in (ensembles or {}).items():
        if eid in systems:
            raise ConfigError(f"{where}: {eid!r} is both a system and an ensemble")
        out[eid] = {"members": list(spec["members"]), "combine": spec.get("combine", "prob")}
    return out


def _parse_decodings(decodings: dict | None, systems: dict, ensembles: dict, where: str) -> dict[str, dict]:
    """``decodings: {id: {system: S, beam: N, monotonic: soft|hard}}``: a trained system decoded differently from
    the preset's ``translate`` settings (Raffel et al.: greedy, and monotonic attention by its soft expected
    alignment or by the hard linear-time process). Like an ensemble it trains nothing; it is kept in the same
    mapping, as an ensemble of one member with decoding options (nmt.config.plan.collect_ensembles checks that
    S is trained for the task)."""
    out = {}
    for did, spec in (decodings or {}).items():
        if did in systems or did in ensembles:
            raise ConfigError(f"{where}: {did!r} is both a decoding and a system or ensemble")
        decode = {key: spec[key] for key in ("beam", "monotonic") if key in spec}
        if not decode:
            raise ConfigError(
                f"{where}: decodings.{did} changes nothing: give 'beam' or 'monotonic' "
                f"(or use the system {spec['system']!r} itself)"
            )
        out[did] = {"members": [spec["system"]], "combine": None, "decode": decode}
    return out


def _parse_alignment(spec: dict | None, systems: dict, ensembles: dict, task: str, where: str) -> dict | None:
    """``alignment:`` makes the table an alignment table: its rows are scored with AER/SAER against the gold
    links of the task's ``testset`` split instead of being translated (nmt.align). Keys:
      uses          systems or ensembles of other tables of the same task whose alignments the rows show
                    (checked over the preset by nmt.config.plan.collect_alignments);
      aligners      statistical baselines, {id: {tool: eflomal, model: 1|2|3, symmetrize: METHOD}}, trained on
                    the task's training data plus the test sentences, as the papers' baselines were;
      reverse_task  also align with the same-named systems of this task (trained for it too) and merge the two
                    directions with ``symmetrize`` (Peter et al.: Och's refined method)."""
    if spec is None:
        return None
    uses = spec.get("uses") or []
    for name in uses:
        if name in systems or name in ensembles:
            raise ConfigError(f"{where}: alignment.uses lists {name!r}, which this table defines itself")
    aligners = {}
    for aid, settings in (spec.get("aligners") or {}).items():
        if aid in systems or aid in ensembles or aid in uses:
            raise ConfigError(f"{where}: {aid!r} is both an aligner and a system")
        settings = settings or {}
        aligners[aid] = {
            "tool": settings.get("tool", "eflomal"),
            "model": settings.get("model", DEFAULT_MODEL),
            "symmetrize": settings.get("symmetrize", DEFAULT_SYMMETRIZE),
        }
    reverse_task = spec.get("reverse_task")
    if reverse_task == task:
        raise ConfigError(
            f"{where}: alignment.reverse_task must name the other direction's task (got {reverse_task!r})"
        )
    symmetrize = spec.get("symmetrize", "refined" if reverse_task else None)
    if symmetrize is not None and not reverse_task:
        raise ConfigError(f"{where}: alignment.symmetrize merges two directions: it needs alignment.reverse_task")
    return {"uses": list(uses), "aligners": aligners, "reverse_task": reverse_task, "symmetrize": symmetrize}


def _parse_row(row: dict, i: int, columns: list[str], row_systems: list[str], alignment: bool, where: str) -> dict:
    """Row ``i``: its system is one the table defines, its paper values are the table's columns, and what it shows
    in a column is a scores field."""
    rwhere = f"{where}: row {i} ({row['label']!r})"
    system = row["system"]
    if system is not None and system not in row_systems:
        raise ConfigError(
            f"{rwhere}: unknown system {system!r}; it is not defined in 'systems', 'ensembles', 'decodings'"
            f"{', alignment.uses or alignment.aligners' if alignment else ''} "
            f"({', '.join(row_systems) or 'none defined'})"
        )
    paper = {}
    for c, v in (row.get("paper") or {}).items():  # none: a row of one's own, without the paper's numbers
        if c not in columns:
            raise ConfigError(f"{rwhere}: paper key {c!r} is not one of the table's columns {columns!r}")
        if not is_number(v):  # the schema lets .nan and .inf through
            raise ConfigError(f"{rwhere}: paper.{c} must be a finite number (got {v!r})")
        paper[c] = float(v)
    values_from = dict(row.get("values_from") or {})
    for c in values_from:
        if c not in columns:
            raise ConfigError(f"{rwhere}: values_from.{c}: not one of the table's columns {columns!r}")
    return {
        "label": row["label"],
        "system": system,
        "paper": paper,
        "requires": row.get("requires"),
        "note": row.get("note"),
        "values_from": values_from,
    }
