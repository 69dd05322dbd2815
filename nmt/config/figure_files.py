"""Paper figure files (``workflow/figures/*.yaml``): parse and validate.
Details: docs/internals/config.md."""

from __future__ import annotations

from pathlib import Path

from ..base.errors import ConfigError
from .schema import first_violation, read_checked

KINDS = ("learning_curves", "bleu_by_length", "attention_maps", "samples")  # schemas/figures.schema.yaml
#: The key that lists a kind's systems.
SYSTEM_LISTS = {"bleu_by_length": "lines", "attention_maps": "maps", "samples": "columns"}


def load_figures(path) -> dict:
    """A validated figure file: ``{id, paper, task, figures: [...]}``; errors name the file, the figure and the
    key (schemas/figures.schema.yaml, then what a schema cannot say: min <= max, one figure per id)."""
    path = Path(path)
    data = read_checked(path, "figures", "figure file")
    parsed, ids = [], set()
    for i, fig in enumerate(data["figures"], start=1):
        label = fig.get("id") if isinstance(fig.get("id"), str) else None
        fig = _parse_figure(fig, f"{path}: figure {i}" + (f" ({label})" if label else ""))
        if fig["id"] in ids:
            raise ConfigError(f"{path}: figure id {fig['id']!r} is used twice")
        ids.add(fig["id"])
        parsed.append(fig)
    return {"id": data["id"], "paper": data["paper"], "task": data["task"], "figures": parsed}


def _parse_figure(fig: dict, where: str) -> dict:
    """One figure, checked against its kind's definition, with defaults filled in."""
    problem = first_violation(fig, "figures", fig["kind"])
    if problem:
        raise ConfigError(f"{where}: {problem}")
    out = dict(fig)
    if "length" in fig:
        low, high = fig["length"]
        if low > high:
            raise ConfigError(f"{where}: length: must be [min, max] source lengths, min <= max (got {fig['length']!r})")
        out["length"] = [low, high]
    if fig["kind"] in SYSTEM_LISTS:
        key = SYSTEM_LISTS[fig["kind"]]
        out[key] = [{"system": ref["system"], "label": ref["label"], "unk": ref.get("unk", False)} for ref in fig[key]]
    out["gold"] = bool(fig.get("gold", False))
    out.setdefault("paper_note", None)
    return out


def figure_systems(fig: dict) -> list[str]:
    """The systems (or ensembles) a figure reads, in order."""
    key = SYSTEM_LISTS.get(fig["kind"])
    return [ref["system"] for ref in fig[key]] if key else []
