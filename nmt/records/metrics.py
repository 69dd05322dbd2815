"""A training's epoch records: the metrics file (one JSON object per finished epoch, layout.METRICS), its CSV twin
for DVC's plots, the evaluations file (train.eval_every), and the digest that ties them to the model info beside them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

from ..base import layout
from ..base.atomic import write_text_atomic
from ..base.errors import InputError
from ..base.files import read_jsonl
from ..config.schema import validator

TEMPLATE, CSV_TEMPLATE, EVALUATIONS_TEMPLATE = layout.METRICS, layout.METRICS_CSV, layout.EVALUATIONS
NAME, CSV_NAME, EVALUATIONS_NAME = (PurePosixPath(t).name for t in (TEMPLATE, CSV_TEMPLATE, EVALUATIONS_TEMPLATE))
SCHEMA = "metrics"  # nmt/config/schemas/metrics.schema.yaml: one line
WHAT = "a training's metrics"
#: the model info's key that holds the digest of the epochs its training wrote
DIGEST_KEY = "metrics_digest"


def metrics_path(results_dir: str | Path, pair: str, system: str) -> Path:
    """The metrics file of ``system``'s training on ``pair`` in a results directory (results/PRESET)."""
    return layout.under(results_dir, layout.RESULTS_ROOT, TEMPLATE, pair=pair, system=system)


def metrics_files(results_dir: str | Path) -> list[Path]:
    """Every training's metrics file in a results directory, sorted."""
    return sorted(Path(results_dir).glob(layout.relative(layout.RESULTS_ROOT, TEMPLATE, pair="*", system="*")))


def write_metrics(model_dir: str | Path, records: list[dict]) -> None:
    """The metrics file of a training's directory, and the same records as CSV beside it (for the tools that read
    CSV, not JSON lines)."""
    path = Path(model_dir) / NAME
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    columns = sorted(records[0]) if records else []
    rows = [",".join(columns)] + [",".join(repr(r[c]) for c in columns) for r in records]
    write_text_atomic(path.with_name(CSV_NAME), "\n".join(rows) + "\n")


def write_evaluations(model_dir: str | Path, evaluations: list[dict]) -> None:
    """The evaluations file of a training's directory: one JSON object per dev evaluation."""
    write_text_atomic(
        Path(model_dir) / EVALUATIONS_NAME, "".join(json.dumps(e, sort_keys=True) + "\n" for e in evaluations)
    )


def read_epochs(path: str | Path, *, allow_empty: bool = False) -> list[dict]:
    """The epochs a metrics file records, each line checked against the schema (InputError naming the file and the
    line); a file without one is refused as any empty JSON Lines file unless ``allow_empty``."""
    return read_jsonl(path, WHAT, schema=validator(SCHEMA), allow_empty=allow_empty)


def read_metrics(path: str | Path) -> list[dict]:
    """The epochs of a training that the report shows (learning curves, the convergence gate, training times).

    Raises ``InputError`` naming the file and line on a malformed line (invalid UTF-8 or JSON, a line that is not
    an object, ``dev_ppl`` missing or not a number, ...), and naming the file when it holds no epoch at all: `nmt
    train` writes it only once an epoch has finished, so an empty one is a damaged record, not a training to leave
    out without a word.
    """
    path = Path(path)
    records = read_epochs(path, allow_empty=True)
    if not records:
        raise InputError(
            f"{path}: empty: no epoch recorded (nmt train writes it once an epoch has finished); train "
            f"the system again, or remove its directory to leave it out"
        )
    return records


def metrics_digest(records: list[dict]) -> str:
    """A digest of a training's epoch records, as the metrics file holds them (key order and spacing aside).

    A metrics file names no system: copied beside another training's model info it would be shown as that
    training's learning curve and exported with its part. The training records this digest in its model info when
    it ends (DIGEST_KEY); the report and export check it (:func:`check_metrics`)."""
    text = json.dumps(records, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_metrics(model_info: dict | None, records: list[dict], metrics_path: Path, model_info_path: Path) -> None:
    """InputError when the records of ``metrics_path`` are not those the training of ``model_info`` wrote. Model info
    written before the digest existed, or by a training still running, has none and is not checked."""
    recorded = (model_info or {}).get(DIGEST_KEY)
    if recorded is not None and metrics_digest(records) != recorded:
        raise InputError(
            f"{metrics_path}: not the epochs the training of {model_info_path} recorded (its "
            f"{DIGEST_KEY} differs: another training's metrics, or edited); put that training's "
            f"{NAME} back, or train the system again"
        )
