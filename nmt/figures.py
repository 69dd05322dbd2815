"""Paper figure files (``workflow/figures/*.yaml``): parse and validate.

A figure file says which of a paper's figures (and figure-like tables, e.g. sample translations) the report
draws, and from which systems. The systems themselves are trained by the table files; a figure only reads what
the DAG wrote for them. Kinds:

- ``learning_curves``: the learning-curve figure of one table (``table``: its id);
- ``bleu_by_length``: tokenised BLEU per source-length bucket, one line per system (``lines``; ``unk: true``
  takes the unk-replaced translation) on ``testset``;
- ``attention_maps``: attention weights from forcing the reference through each system (``maps``) for one
  sentence of ``split``: the first whose source length is within ``length`` [min, max]; ``gold: true`` adds the
  split's gold alignment (when the corpus has one);
- ``samples``: ``count`` test sentences (source, reference, one column per system) taken at even intervals among
  those whose source length is within ``length``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .tables import _check_id

_REFS = {"system", "label", "unk"}
KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    # kind: {"required": ..., "optional": ...}
    "learning_curves": {"required": ("table",), "optional": ()},
    "bleu_by_length": {"required": ("testset", "lines"), "optional": ()},
    "attention_maps": {"required": ("split", "length", "maps"), "optional": ("gold",)},
    "samples": {"required": ("testset", "count", "length", "columns"), "optional": ()},
}
_COMMON = ("id", "kind", "title")
_COMMON_OPTIONAL = ("paper_note",)
#: The key that lists a kind's systems.
SYSTEM_LISTS = {"bleu_by_length": "lines", "attention_maps": "maps", "samples": "columns"}


def _system_refs(value: Any, where: str) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: must be a non-empty list of {{system, label}} entries")
    refs = []
    for i, ref in enumerate(value, start=1):
        if not isinstance(ref, dict) or not {"system", "label"} <= set(ref) or set(ref) - _REFS:
            raise ValueError(f"{where}[{i}]: must be a mapping with 'system' and 'label' (and optionally 'unk')")
        _check_id(ref["system"], "'system'", f"{where}[{i}]")
        if not isinstance(ref["label"], str) or not ref["label"].strip():
            raise ValueError(f"{where}[{i}]: 'label' must be a non-empty string")
        if not isinstance(ref.get("unk", False), bool):
            raise ValueError(f"{where}[{i}]: 'unk' must be true or false")
        refs.append({"system": ref["system"], "label": ref["label"], "unk": ref.get("unk", False)})
    return refs


def _length_range(value: Any, where: str) -> list[int]:
    if (not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, int) and v > 0 for v in value)
            or value[0] > value[1]):
        raise ValueError(f"{where}: must be [min, max] source lengths, 0 < min <= max (got {value!r})")
    return list(value)


def _parse_figure(fig: Any, where: str) -> dict:
    if not isinstance(fig, dict):
        raise ValueError(f"{where}: must be a mapping")
    kind = fig.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    allowed = (*_COMMON, *_COMMON_OPTIONAL, *KINDS[kind]["required"], *KINDS[kind]["optional"])
    missing = [k for k in (*_COMMON, *KINDS[kind]["required"]) if k not in fig]
    unknown = sorted(k for k in fig if k not in allowed)
    if missing or unknown:
        raise ValueError(f"{where}: " + "; ".join(
            ([f"missing key(s) {', '.join(missing)}"] if missing else [])
            + ([f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(allowed)})"] if unknown else [])))
    out = dict(fig)
    _check_id(fig["id"], "'id'", where)
    if not isinstance(fig["title"], str) or not fig["title"].strip():
        raise ValueError(f"{where}: 'title' must be a non-empty string")
    for key in ("testset", "split", "table"):
        if key in fig:
            _check_id(fig[key], f"'{key}'", where)
    if "length" in fig:
        out["length"] = _length_range(fig["length"], f"{where}: length")
    if "count" in fig and (not isinstance(fig["count"], int) or fig["count"] < 1):
        raise ValueError(f"{where}: 'count' must be a positive integer")
    if kind in SYSTEM_LISTS:
        out[SYSTEM_LISTS[kind]] = _system_refs(fig[SYSTEM_LISTS[kind]], f"{where}: {SYSTEM_LISTS[kind]}")
    out["gold"] = bool(fig.get("gold", False))
    out.setdefault("paper_note", None)
    return out


def load_figures(path) -> dict:
    """A validated figure file: ``{id, paper, task, figures: [...]}``; errors name the file and the figure."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{path}: cannot read figure file: {e}") from e
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: invalid YAML: {e}") from e
    if not isinstance(data, dict) or set(data) != {"id", "paper", "task", "figures"}:
        raise ValueError(f"{path}: a figure file is a mapping with exactly: id, paper, task, figures")
    _check_id(data["id"], "'id'", str(path))
    figures = data["figures"]
    if not isinstance(figures, list) or not figures:
        raise ValueError(f"{path}: 'figures' must be a non-empty list")
    parsed, ids = [], set()
    for i, fig in enumerate(figures, start=1):
        label = fig.get("id") if isinstance(fig, dict) else None
        fig = _parse_figure(fig, f"{path}: figure {i}" + (f" ({label})" if label else ""))
        if fig["id"] in ids:
            raise ValueError(f"{path}: figure id {fig['id']!r} is used twice")
        ids.add(fig["id"])
        parsed.append(fig)
    return {"id": data["id"], "paper": data["paper"], "task": data["task"], "figures": parsed}


def figure_systems(fig: dict) -> list[str]:
    """The systems (or ensembles) a figure reads, in order."""
    key = SYSTEM_LISTS.get(fig["kind"])
    return [ref["system"] for ref in fig[key]] if key else []
