"""What a run was made from, for telling two runs apart: the preset, and for every table the corpus its systems were
trained on and the settings they were trained and decoded with. `nmt report` writes it into the claims file (`run`,
nmt.records.report_files), and `nmt compare` refuses to set two reports side by side whose runs differ in it.
Details: docs/internals/records.md."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .. import config as cfg
from ..config import plan
from ..data.tasks import data_task
from ..settings import comparable_settings


def digest(obj: Any) -> str:
    """A short stable hash of a JSON-able object (anything else by its str)."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def run_identity(config: dict, root: str | Path = ".", recorded: dict[tuple[str, str], dict] | None = None) -> dict:
    """{"preset", "corpora": {task: {"corpus": name, "digest"}}, "tables": {table id: digest}} of the preset's
    tables (``config``: params.yaml merged with the preset). ``recorded``: {(task, system): the config its training
    recorded in its model info}: a system trained is described by what it was trained with, not by what the preset
    says now (a run trained under an earlier rule is not "trained alike" with one trained under the current)."""
    root = Path(root)
    systems, ensembles = plan.collect_systems(config, root), plan.collect_ensembles(config, root)
    unavailable = plan.unavailable_tables(config, root)
    loaded: dict[str, dict] = {}

    def table_of(path: str) -> dict:
        if path not in loaded:
            loaded[path] = cfg.load_table(root / path)
        return loaded[path]

    def trained(task: str, name: str) -> dict:
        path = systems[task][name]
        resolved = cfg.system_config(config, table_of(path), name, path)
        settings = comparable_settings((recorded or {}).get((task, name)) or resolved)
        settings["train"].pop("seed", None)
        return {**settings, "translate": resolved.get("translate")}

    corpora, tables = {}, {}
    for table_path in config["tables"]:
        table = table_of(table_path)
        task = table["task"]
        corpus = {
            "data": config["data"]["tasks"][data_task(config, task)],
            "prepare": cfg.prepare_for_task(config, task),
        }
        corpora[task] = {"corpus": cfg.corpus_for_task(config, task)["corpus"], "digest": digest(corpus)}
        aligners = (table.get("alignment") or {}).get("aligners") or {}
        rows = {}
        for row in table["rows"]:
            name = row["system"]
            if name is None or name in rows:
                continue
            if name in systems.get(task, {}):
                rows[name] = trained(task, name)
            elif name in ensembles.get(task, {}):
                rows[name] = ensembles[task][name]
            else:
                rows[name] = aligners.get(name)
        tables[table["id"]] = digest(
            {
                "corpus": corpus,
                "rows": rows,
                "alignment": table.get("alignment"),
                "unavailable": table_path in unavailable,
                "unk": config.get("unk"),
                "eflomal": config.get("eflomal"),
            }
        )
    return {"preset": config["preset"], "corpora": corpora, "tables": tables}
