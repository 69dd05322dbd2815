"""What a report page must state besides the tables: preset, corpora, training and decoding settings.

Everything here is read from files the pipeline wrote (corpus statistics, prepared-data records, each
model's model info), so the page describes the runs that produced its numbers.
"""

from __future__ import annotations

from pathlib import Path

from .. import __version__
from ..base import layout
from ..base.environment import git_commit
from ..base.errors import InputError
from ..base.files import read_json
from ..config.schema import validator
from ..data.prepare import TRAINING_FILES, prepared_fingerprint
from ..data.synth import describe
from ..data.tasks import data_task
from ..records.model_info import model_info_path, read_model_info
from ..settings import SystemSettings, upgrade_value


def _read_json(path: Path, what: str, schema) -> dict | None:
    """The file through nmt.base.files.read_json, checked against ``schema``; None when it does not exist (a step not
    run yet). A file that is there but malformed is one InputError naming it, not a section left out without a
    word."""
    if not path.is_file():
        return None
    return read_json(path, what, schema=schema)


def training_settings(train: dict, epochs, halve_after, plateau) -> dict:
    """The settings the report shows of a training (a system's, from its model info, or the preset's own):
    ``train`` its resolved train section, the schedule's fields as it ran (nmt.settings.schedule)."""
    settings = {
        "optimizer": train["optimizer"],
        "lr": train["lr"],
        "epochs": epochs,
        "halve_after": halve_after,
        "batch_size": train["batch_size"],
        "clip_norm": train["clip_norm"],
    }
    if plateau:  # the epochs above are at most; the metrics say how many were trained
        # (one recorded before plateau.patience existed: patience 1: train.plateau's `within`, nmt.settings.sections)
        settings["plateau"] = upgrade_value("train", "plateau", plateau)
    return settings


def corpora_in_words(corpus_of: dict[str, str]) -> str:
    """{task: corpus} as one line, each corpus once: "synth (for en-de, de-en)"."""
    tasks_of: dict[str, list[str]] = {}
    for task, corpus in corpus_of.items():
        tasks_of.setdefault(corpus, []).append(task)
    return "; ".join(f"{corpus} (for {', '.join(tasks)})" for corpus, tasks in tasks_of.items())


def check_data(meta: dict, model_json: Path, data_dir: Path, pair: str, fingerprints: dict) -> None:
    """InputError when a training recorded other prepared data than the report's --data holds for its pair (the
    corpus sizes and vocabularies on the page would be another run's). ``fingerprints``: the pairs' data, computed
    once. Model info that records no data (written before it was recorded) is not checked."""
    recorded = (meta.get("data") or {}).get("fingerprint")
    prepared = layout.under(data_dir, layout.DATA_ROOT, layout.PREPARED, pair=pair)
    if recorded is None or not all((prepared / name).is_file() for name in TRAINING_FILES):
        return
    if pair not in fingerprints:
        fingerprints[pair] = prepared_fingerprint(prepared)
    if fingerprints[pair] != recorded:
        raise InputError(
            f"{model_json}: trained on the data in {meta['data'].get('dir')} (fingerprint {recorded}), "
            f"not on {prepared} ({fingerprints[pair]}): --data is another run's data; give the data "
            f"this run was trained on"
        )


def report_context(config: dict, data_dir: Path, results_dir: Path, trained: dict[str, dict]) -> dict:
    """``trained``: {task: {system: ...}}, every training of the plan (nmt.config.plan.collect_systems)."""
    corpora, corpus_of = {}, {}
    for task in config["data"]["tasks"]:
        pair = data_task(config, task)  # a task played by another's corpus (same_as) shows that corpus
        spec = config["data"]["tasks"][pair]
        raw_stats = (
            _read_json(
                layout.under(data_dir, layout.DATA_ROOT, layout.RAW_STATS, pair=pair),
                "a corpus's statistics",
                validator("data-stats"),
            )
            or {}
        )
        prep = (
            _read_json(
                layout.under(data_dir, layout.DATA_ROOT, layout.PREP_STATS, pair=pair),
                "a prepared corpus's statistics",
                validator("data-stats"),
            )
            or {}
        )
        description = spec["corpus"]
        corpus_of[task] = spec["corpus"]
        if spec["corpus"] == "synth":
            description = describe()
        corpora[task] = {
            "name": f"{spec['corpus']} (in the role of {task})",
            "description": description,
            "splits": prep.get("splits") or raw_stats.get("splits") or {},
            "vocabulary": {"src": prep.get("src_vocab"), "tgt": prep.get("tgt_vocab")},
            "preprocessing": {k: prep.get(k) for k in ("tokenize", "lowercase", "max_len", "train_dropped_by_length")},
        }

    training, fingerprints = {}, {}
    pairs = sorted(trained)
    for pair, system in sorted((pair, system) for pair in pairs for system in trained[pair]):
        model_json = model_info_path(results_dir, pair, system)
        meta = read_model_info(model_json, "described") if model_json.is_file() else None
        if not meta:
            continue
        check_data(meta, model_json, data_dir, pair, fingerprints)
        settings = training_settings(
            meta["config"]["train"], meta["epochs"], meta.get("halve_after"), meta.get("plateau")
        )
        # one row per training: a system of one name trained for two pairs is two trainings, and may differ
        training[f"{pair}/{system}" if len(pairs) > 1 else system] = {**settings, "device": meta.get("device")}
    preset = SystemSettings.from_config(config).schedule
    revision = git_commit(short=True)  # the code's commit (nmt.base.environment; the full one in Environment and cost)
    return {
        "corpus": next(iter(corpora.values()), {}),
        "corpora": corpora,
        "corpora_in_words": corpora_in_words(corpus_of),
        "training": training,
        # what a system's settings are compared with: the preset's own train section and schedule
        "preset_training": training_settings(config["train"], preset.epochs, preset.halve_after, preset.plateau),
        "decoding": config["translate"],
        "generated_by": f"nmt {__version__}" + (f" (git {revision})" if revision else ""),
    }
