"""Which corpus plays a table's task in a preset (data.tasks.{task}), and whether a licence-gated split of it may
be used. nmt.config plans the DAG from these; `nmt data get` fetches what they allow."""
from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .fetch import load_registry


def corpus_for_task(config: dict, task: str) -> dict:
    """The corpus spec that plays a table's task (e.g. en-de) in this preset."""
    tasks = (config.get("data") or {}).get("tasks") or {}
    if task not in tasks:
        raise ConfigError(f"preset {config['preset']!r} has no corpus for task {task!r} (data.tasks.{task})")
    return tasks[task]


def licence_allows(config: dict, source) -> bool:
    """Whether a split from a licence-gated corpus (the RWTH gold alignments) can be used: you stated that you
    accepted its licence (its accept flag, e.g. data.accept_rwth_licence: true), or your own copy of every file
    is in the mirror (data.mirror, relative to the working directory). Otherwise the split does not exist for
    this preset: the tables that need it are reported as not run, and nothing is downloaded."""
    if not isinstance(source, dict) or "corpus" not in source:
        return True
    registry = load_registry()
    corpus = registry.get(source["corpus"])
    if corpus is None or not corpus.get("licence_gated"):
        return True
    data = config.get("data") or {}
    flag = (corpus.get("accept_flag") or "").split(".")[-1]
    if flag and data.get(flag) is True:
        return True
    mirror = data.get("mirror")
    names = [source["src"], source["tgt"]] + ([source["gold"]] if source.get("gold") else [])
    return bool(mirror) and all((Path(mirror) / corpus["files"][n]["mirror"]).is_file() for n in names
                                if n in corpus["files"] and corpus["files"][n].get("mirror"))
