"""The report's "Environment and cost" section: on what the report was rendered, where the trainings ran, and what
they cost in device time.
Details: docs/internals/report.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config.table_files import is_number
from ..records import metrics as metrics_file
from ..records import model_info

DASH = "\u2013"
SOURCE_WALL, SOURCE_EPOCHS = model_info.NAME, metrics_file.NAME  # the file a training's time comes from
SOURCE_LABELS = {
    SOURCE_WALL: f"{SOURCE_WALL} wall_s",
    SOURCE_EPOCHS: f"{SOURCE_EPOCHS} elapsed_s (epochs only)",
    None: DASH,
}
# what the distinct training environments are told apart by: (key, label)
ENVIRONMENT_FIELDS = (
    ("device", "device"),
    ("cpu", "CPU"),
    ("driver", "GPU driver"),
    ("torch", "torch"),
    ("cuda", "CUDA"),
    ("cudnn", "cuDNN"),
    ("commit", "commit"),
    ("dirty", "uncommitted changes"),
)


def training_seconds(model_json: dict | None, metrics: list[dict]) -> tuple[float | None, str | None]:
    """A training's wall time on its device and its source: its model info's wall_s (setup to model.pt, every process
    of a resumed training), else the sum of its metrics' per-epoch elapsed_s (model info written before
    wall_s existed: training epochs only), else (None, None)."""
    if model_json and is_number(model_json.get("wall_s")):
        return float(model_json["wall_s"]), SOURCE_WALL
    elapsed = [r["elapsed_s"] for r in metrics if is_number(r.get("elapsed_s"))]
    if elapsed:
        return float(sum(elapsed)), SOURCE_EPOCHS
    return None, None


def training_environment(model_json: dict | None) -> dict | None:
    """The fields a training environment is told apart by (ENVIRONMENT_FIELDS), from the model info's `environment`;
    None when it has none (written before nmt recorded it)."""
    env = (model_json or {}).get("environment")
    if not isinstance(env, dict):
        return None
    hardware, software, code = (
        env.get(k) if isinstance(env.get(k), dict) else {} for k in ("hardware", "software", "code")
    )
    device = env.get("device")
    gpus = hardware.get("gpus") if isinstance(hardware.get("gpus"), list) else []
    on_gpu = device not in (None, "cpu")
    return {
        "device": device,
        "cpu": hardware.get("cpu"),
        "driver": next((g.get("driver") for g in gpus if isinstance(g, dict)), None) if on_gpu else None,
        "torch": software.get("torch"),
        "cuda": software.get("cuda"),
        "cudnn": software.get("cudnn"),
        "commit": code.get("commit"),
        "dirty": code.get("dirty"),
    }


def _hours(seconds: float) -> float:
    return round(seconds / 3600.0, 6)


def _sums(entries: list[dict]) -> dict:
    """trainings, timed, device_hours and device_hours by device of `entries` (rows of `systems`)."""
    timed = [e for e in entries if e["wall_s"] is not None]
    by_device: dict[str, float] = {}
    for e in timed:
        device = e["device"] or "unknown"  # model info that names none
        by_device[device] = by_device.get(device, 0.0) + e["wall_s"]
    return {
        "trainings": len(entries),
        "timed": len(timed),
        "wall_s": sum(e["wall_s"] for e in timed),
        "device_hours": _hours(sum(e["wall_s"] for e in timed)),
        "by_device": {device: _hours(seconds) for device, seconds in by_device.items()},
    }


def environment_data(
    report_machine: dict,
    tables: list[dict],
    results_dir: Path,
    pair_for_task: dict[str, str],
    runs: dict[str, dict[str, list[str]]] | None = None,
    unavailable_ids: set[str] | None = None,
) -> dict:
    """environment.json (module docstring). `tables`: the loaded table files (nmt.config.table_files.load_table), in the
    report's order; `runs`: {pair: {system: [its seed runs]}} (nmt.config.plan.collect_runs); `unavailable_ids`:
    tables the preset cannot measure (an alignment table without gold links trains nothing for its reverse task)."""
    runs, unavailable_ids = runs or {}, unavailable_ids or set()
    systems: dict[tuple[str, str], dict] = {}  # (pair, run) -> its row, in the order first met
    environments: list[dict] = []
    table_rows = []

    def entry(pair: str, system: str, run: str) -> dict:
        if (pair, run) in systems:
            return systems[(pair, run)]
        mfile = metrics_file.metrics_path(results_dir, pair, run)
        jfile = model_info.model_info_path(results_dir, pair, run)
        model_json = model_info.read_model_info(jfile) if jfile.is_file() else None
        metrics = metrics_file.read_metrics(mfile) if mfile.is_file() else []
        seconds, source = training_seconds(model_json, metrics)
        env = training_environment(model_json)
        row = {
            "pair": pair,
            "system": system,
            "run": run,
            "wall_s": seconds,
            "source": source,
            "device": (env or {}).get("device") or (model_json or {}).get("device"),
            "trained": model_json is not None or bool(metrics),
        }
        if row["trained"]:
            group = next((g for g in environments if g["environment"] == env), None)
            if group is None:
                group = {"environment": env, "trainings": 0, "systems": []}
                environments.append(group)
            group["trainings"] += 1
            group["systems"].append(f"{pair}/{run}")
        systems[(pair, run)] = row
        return row

    ensembles = {name: spec["members"] for table in tables for name, spec in (table.get("ensembles") or {}).items()}
    for table in tables:
        pairs = [pair_for_task[table["task"]]]
        reverse = (table.get("alignment") or {}).get("reverse_task")
        if reverse and table["id"] not in unavailable_ids and reverse in pair_for_task:
            pairs.append(pair_for_task[reverse])
        rows = [
            entry(pair, system, run)
            for pair in pairs
            for system in _rests_on(table, ensembles)
            for run in runs.get(pair, {}).get(system, [system])
        ]
        table_rows.append({"table": table["id"], "title": table.get("title"), **_sums(rows)})
    return {
        "report": report_machine,
        "trainings": environments,
        "systems": list(systems.values()),
        "tables": table_rows,
        "total": _sums(list(systems.values())),
    }


def _rests_on(table: dict, ensembles: dict[str, list[str]]) -> list[str]:
    """The trained systems a table's numbers rest on: its own, its ensembles' and decodings' members, and the
    systems of other tables it uses (an alignment table's `uses`, an ensemble among them by its members)."""
    names = [*table["systems"]]
    for name in [*(table.get("ensembles") or {}), *((table.get("alignment") or {}).get("uses") or [])]:
        names += ensembles.get(name, [name])
    return list(dict.fromkeys(names))


# -- the section's view -----------------------------------------------------------------------------------------
def fmt_duration(seconds: Any) -> str:
    """Seconds as the report shows a duration: 12.3s, 4m 05s, 2h 03m 04s."""
    if not is_number(seconds):
        return DASH
    s = int(round(float(seconds)))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h {m:02d}m {sec:02d}s"
    if m:
        return f"{m}m {sec:02d}s"
    return f"{float(seconds):.1f}s"


def fmt_hours(hours: Any) -> str:
    if not is_number(hours):
        return DASH
    return f"{hours:,.1f}" if hours >= 100 else f"{hours:.3f}" if hours >= 0.001 or hours == 0 else f"{hours:.1e}"


def training_time_cell(seconds: float | None, source: str | None) -> str:
    """A training time as the report shows it: marked '*' where it is the epochs' elapsed_s only."""
    return fmt_duration(seconds) + (" *" if source == SOURCE_EPOCHS else "")


def _text(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _commit(code: dict) -> str:
    commit = code.get("commit")
    if not commit:
        return "not a git checkout (or git unavailable)"
    dirty = code.get("dirty")
    return commit + (" with uncommitted changes" if dirty else "" if dirty is False else " (changes unknown)")


def environment_view(data: dict) -> dict:
    """What the template's Environment and cost section shows, as strings."""
    machine = data["report"] or {}
    hardware, software = machine.get("hardware") or {}, machine.get("software") or {}
    gpus = hardware.get("gpus")
    gpu_text = (
        DASH
        if gpus is None
        else "none"
        if not gpus
        else "; ".join(f"{g.get('name') or DASH} (driver {g.get('driver') or DASH})" for g in gpus)
    )
    report_rows = [
        (
            "CPU",
            f"{_text(hardware.get('cpu'))}, {_text(hardware.get('cpu_count'))} logical CPUs, "
            f"{_text(hardware.get('machine'))}",
        ),
        ("GPUs", gpu_text),
        ("OS", _text(software.get("os"))),
        ("Python", _text(software.get("python"))),
        (
            "torch",
            f"{_text(software.get('torch'))} (CUDA {_text(software.get('cuda'))}, "
            f"cuDNN {_text(software.get('cudnn'))})",
        ),
    ]
    report_rows += [
        (name, _text(software.get(key)))
        for key, name in (
            ("sacrebleu", "sacreBLEU"),
            ("sacremoses", "sacremoses"),
            ("eflomal", "eflomal"),
            ("numpy", "numpy"),
            ("nmt", "nmt"),
        )
    ]
    report_rows.append(("commit", _commit(machine.get("code") or {})))
    environments = []
    for group in data["trainings"]:
        env = group["environment"]
        cells = [_text(env.get(key)) for key, _ in ENVIRONMENT_FIELDS] if env is not None else None
        environments.append({"cells": cells, "trainings": group["trainings"], "systems": ", ".join(group["systems"])})

    def sums(row: dict) -> dict:
        by_device = "; ".join(f"{device}: {fmt_hours(hours)}" for device, hours in row["by_device"].items())
        return {
            "trainings": row["trainings"],
            "timed": row["timed"],
            "time": fmt_duration(row["wall_s"]),
            "hours": fmt_hours(row["device_hours"]),
            "by_device": by_device or DASH,
        }

    return {
        "report": [{"key": k, "value": v} for k, v in report_rows],
        "environment_columns": [label for _, label in ENVIRONMENT_FIELDS],
        "environments": environments,
        "tables": [{"id": t["table"], "title": t["title"] or t["table"], **sums(t)} for t in data["tables"]],
        "total": sums(data["total"]),
        "systems": [
            {
                "pair": s["pair"],
                "run": s["run"],
                "device": _text(s["device"]),
                "time": training_time_cell(s["wall_s"], s["source"]) if s["trained"] else "not trained",
                "source": SOURCE_LABELS[s["source"]],
            }
            for s in data["systems"]
        ],
        "epochs_only": any(s["source"] == SOURCE_EPOCHS for s in data["systems"]),
    }
