"""What ties a training's records together: model.json's digest of the metrics.jsonl written beside it.

A metrics.jsonl names no system (one JSON object per epoch); copied beside another training's model.json it would be
shown as that training's learning curve and convergence record, and exported with its part. `nmt train` records in
model.json, when the training ends, a digest of the epochs it wrote (``metrics_digest``); the report and export check
it (``check_metrics``). A model.json written before the digest existed, or by a training still running, has none and
is not checked.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..base.errors import InputError

DIGEST_KEY = "metrics_digest"


def metrics_digest(records: list[dict]) -> str:
    """A digest of a training's epoch records, as metrics.jsonl holds them (key order and spacing aside)."""
    text = json.dumps(records, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_metrics(model_json: dict | None, records: list[dict], metrics_path: Path, model_json_path: Path) -> None:
    """InputError when the records of ``metrics_path`` are not those the training of ``model_json`` wrote."""
    recorded = (model_json or {}).get(DIGEST_KEY)
    if recorded is not None and metrics_digest(records) != recorded:
        raise InputError(f"{metrics_path}: not the epochs the training of {model_json_path} recorded (its "
                         f"{DIGEST_KEY} differs: another training's metrics, or edited); put that training's "
                         f"metrics.jsonl back, or train the system again")
