"""Which corpus plays a table's task in a preset (data.tasks.{task}), and whether a licence-gated split of it may
be used. nmt.config plans the DAG from these; `nmt data get` fetches what they allow."""
from __future__ import annotations

from pathlib import Path

from ..base.errors import ConfigError
from .corpus_registry import load_registry


def data_task(config: dict, task: str) -> str:
    """The task whose corpus and results play `task` in this preset: `task` itself, or the task its entry names
    with `same_as` (a preset without Europarl plays Peter et al.'s de-en-europarl with its de-en corpus, and the
    systems are trained, decoded and stored once, under that task)."""
    tasks = (config.get("data") or {}).get("tasks") or {}
    seen = [task]
    while True:
        if task not in tasks:
            raise ConfigError(f"preset {config['preset']!r} has no corpus for task {task!r} (data.tasks.{task})")
        other = (tasks[task] or {}).get("same_as")
        if other is None:
            return task
        if other in seen:
            raise ConfigError(f"preset {config['preset']!r}: data.tasks.{seen[0]}: same_as goes round in a circle "
                              f"({' -> '.join(seen + [other])})")
        seen.append(other)
        task = other


def corpus_for_task(config: dict, task: str) -> dict:
    """The corpus spec that plays a table's task (e.g. en-de) in this preset (through `same_as`)."""
    return config["data"]["tasks"][data_task(config, task)]


def licence_allows(config: dict, source) -> bool:
    """Whether a split from a licence-gated corpus (the RWTH gold alignments) can be used: you stated that you
    accepted its licence (its accept flag, e.g. data.accept_rwth_licence: true), or your own copy of every file
    is in the mirror (data.mirror, relative to the working directory). Otherwise the split does not exist for
    this preset: the tables that need it are reported as not run, and nothing is downloaded."""
    if not isinstance(source, dict) or "corpus" not in source:
        return True
    registry = load_registry()
    corpus = registry.get(source["corpus"])
    if corpus is None or not corpus.licence_gated:
        return True
    data = config.get("data") or {}
    flag = (corpus.accept_flag or "").split(".")[-1]
    if flag and data.get(flag) is True:
        return True
    mirror = data.get("mirror")
    names = [source["src"], source["tgt"]] + ([source["gold"]] if source.get("gold") else [])
    return bool(mirror) and all((Path(mirror) / corpus.files[n].mirror).is_file() for n in names
                                if n in corpus.files and corpus.files[n].mirror)
