"""A trained system's model info (layout.MODEL_INFO, written by `nmt train`): its resolved config, sizes, data,
environment and, once it has finished, its wall time and the digest of its epochs (nmt.records.metrics). Fields are
added over time; model info written before one existed lacks it, and its readers say what they do then.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from ..base import layout
from ..base.atomic import write_text_atomic
from ..base.files import read_json
from ..config.schema import validator

TEMPLATE = layout.MODEL_INFO
NAME = PurePosixPath(TEMPLATE).name
SCHEMA = "model"  # nmt/config/schemas/model.schema.yaml; its `described`: what the report's settings need
WHAT = f"a {NAME}"


def model_info_path(results_dir: str | Path, pair: str, system: str) -> Path:
    """The model info of ``system``'s training on ``pair`` in a results directory (results/PRESET)."""
    return layout.under(results_dir, layout.RESULTS_ROOT, TEMPLATE, pair=pair, system=system)


def write_model_info(model_dir: str | Path, meta: dict) -> None:
    """The model info of a training's directory (sorted keys, indent 2, ASCII, a trailing newline)."""
    write_text_atomic(Path(model_dir) / NAME, json.dumps(meta, indent=2, sort_keys=True) + "\n")


def read_model_info(path: str | Path, part: str | None = None) -> dict:
    """A model info file, checked against the schema (its ``$defs`` entry ``part`` when given): InputError naming the
    file and the line, or the key whose value breaks it."""
    return read_json(path, WHAT, schema=validator(SCHEMA, part))
