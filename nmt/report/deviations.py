"""Every way a preset's runs differ from the papers', in one list, generated from the configs.
Details: docs/internals/report.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import config as cfg
from ..data.tasks import corpus_for_task
from ..settings import comparable_settings


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
    comparable = comparable_settings(resolved)
    return {
        **_flat(comparable["model"], "model."),
        **_flat(comparable["train"], "train."),
        **_flat(cfg.prepare_for_task(resolved, task), "prepare."),
        **_flat(resolved.get("translate") or {}, "translate."),
    }


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
        tasks = [table["task"]] + (
            [table["alignment"]["reverse_task"]] if table["alignment"] and table["alignment"]["reverse_task"] else []
        )
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
    settings = [
        {"key": key, "ours": ours, "paper": theirs, "systems": systems}
        for (key, ours, theirs), systems in sorted(grouped.items())
    ]
    return {"corpora": corpora, "settings": settings, "declared": declared}


def claim_scopes(
    config: dict, paper: dict, table_paths: list[str], found: dict, root: str | Path = "."
) -> dict[str, dict]:
    """{table id: scope}: what a verdict on that table's systems was measured at, beside the verdict: the preset, the
    corpus that played the table's task (and the paper preset's), the model size of the table's systems (and the
    paper preset's) and how many settings of `found` (:func:`deviations`) concern them; ``text`` says it in one line."""
    scopes = {}
    for table_path in table_paths:
        table = cfg.load_table(Path(root) / table_path)
        try:
            ours = corpus_for_task(config, table["task"])["corpus"]
        except cfg.ConfigError:
            continue
        try:
            theirs = corpus_for_task(paper, table["task"])["corpus"]
        except cfg.ConfigError:
            theirs = None
        sizes = {
            _model_size(cfg.system_config(conf, table, system, table_path)["model"])
            for conf in (config,)
            for system in table["systems"]
        }
        paper_sizes = {
            _model_size(cfg.system_config(paper, table, system, table_path)["model"]) for system in table["systems"]
        }
        names = {f"{task}/{system}" for task in (table["task"],) for system in table["systems"]}
        settings = sum(1 for d in found["settings"] if names & set(d["systems"]) or d["systems"] == ["every system"])
        corpus = ours if theirs in (None, ours) else f"{ours} in place of {theirs}"
        model = ", ".join(sorted(sizes)) + (
            "" if sizes == paper_sizes else f" (paper preset: {', '.join(sorted(paper_sizes))})"
        )
        text = f"preset {config['preset']}: {corpus}; {model}"
        if settings:
            text += f"; {settings} setting{'s' if settings != 1 else ''} differ from the paper preset"
        scopes[table["id"]] = {
            "preset": config["preset"],
            "corpus": corpus,
            "model": model,
            "settings_differing": settings,
            "text": text,
        }
    return scopes


def _model_size(model: dict) -> str:
    """A model's size in words: its layers x units (and the architecture when it is not Luong et al.'s)."""
    size = f"{model['layers']}x{model['hidden']}"
    return size if model["arch"] == "luong" else f"{model['arch']} {model['embed']}/{model['hidden']}"
