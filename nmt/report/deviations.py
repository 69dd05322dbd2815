"""Every way a preset's runs differ from the papers', in one list, generated from the configs.

Three sources, so that nothing is typed twice:
- corpora: a task played by another corpus than in the paper preset (the demo's synthetic pair in place of WMT'14);
- settings: each key of a system's resolved `model`/`train` settings and of its task's `prepare` settings whose value
  differs from the same system's under the paper preset (nmt.config.system_config of both), grouped by key and values
  with the systems it concerns (e.g. "train.optimizer: adam, the paper's sgd (30 systems)");
- declared: what even the paper preset does differently from the paper, one line per fact in the table files'
  `deviations:` (the ensemble's members, an aligner in place of another, a value the paper's text lost).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import config as cfg
from ..data.tasks import corpus_for_task


def _flat(d: dict, prefix: str) -> dict[str, Any]:
    out = {}
    for key, value in d.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _settings(config: dict, table: dict, system: str, table_path: str, task: str) -> dict[str, Any]:
    resolved = cfg.system_config(config, table, system, table_path)
    comparable = cfg.comparable_settings(resolved)
    return {**_flat(comparable["model"], "model."), **_flat(comparable["train"], "train."),
            **_flat(cfg.prepare_for_task(resolved, task), "prepare."),
            **_flat(resolved.get("translate") or {}, "translate.")}


def _show(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def deviations(config: dict, paper: dict, table_paths: list[str], root: str | Path = ".") -> dict:
    """{"corpora": [...], "settings": [...], "declared": [...]} for `config` (a resolved preset) against `paper`
    (the paper preset, resolved the same way). Settings of systems the paper preset cannot train (a task it lacks)
    are left out; a preset that is the paper preset has only declared deviations."""
    corpora = []
    for task in config["data"]["tasks"]:
        try:
            ours, theirs = corpus_for_task(config, task)["corpus"], corpus_for_task(paper, task)["corpus"]
        except cfg.ConfigError:  # a task the paper preset does not have
            continue
        if ours != theirs:
            corpora.append(f"task {task}: {ours} in place of {theirs}")
    grouped: dict[tuple[str, str, str], list[str]] = {}
    declared = []
    for table_path in table_paths:
        table = cfg.load_table(Path(root) / table_path)
        declared += [f"{table['id']}: {line}" for line in table["deviations"]]
        tasks = [table["task"]] + ([table["alignment"]["reverse_task"]]
                                   if table["alignment"] and table["alignment"]["reverse_task"] else [])
        for task in tasks:
            try:
                corpus_for_task(paper, task)
            except cfg.ConfigError:
                continue
            for system in table["systems"]:
                ours = _settings(config, table, system, table_path, task)
                theirs = _settings(paper, table, system, table_path, task)
                for key in sorted(set(ours) | set(theirs)):
                    if ours.get(key) != theirs.get(key):
                        name = f"{task}/{system}"
                        group = grouped.setdefault((key, _show(ours.get(key)), _show(theirs.get(key))), [])
                        if name not in group:
                            group.append(name)
    for key, value in _flat(config.get("unk") or {}, "unk.").items():  # unk replacement: every system's
        theirs = _flat(paper.get("unk") or {}, "unk.").get(key)
        if value != theirs:
            grouped[(key, _show(value), _show(theirs))] = ["every system"]
    settings = [{"key": key, "ours": ours, "paper": theirs, "systems": systems}
                for (key, ours, theirs), systems in sorted(grouped.items())]
    return {"corpora": corpora, "settings": settings, "declared": declared}
