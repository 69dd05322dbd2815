"""A translation's or an alignment's scores file (layout.SCORES, written by `nmt evaluate` and `nmt align score`):
the metrics of one system on one test set, with the preset, system, test set and pair it belongs to. The tables,
figures, claims and exports read it; a field written before it existed is absent, which the reader notices.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..base import layout
from ..base.atomic import write_json_atomic
from ..base.errors import InputError
from ..base.files import read_json
from ..config.schema import validator
from ..config.table_files import BLEU_COLUMNS, KNOWN_COLUMNS, is_number

TEMPLATE, DIR_TEMPLATE = layout.SCORES, layout.SCORES_DIR
DIR_NAME = PurePosixPath(DIR_TEMPLATE).name
SCHEMA = "scores"  # nmt/config/schemas/scores.schema.yaml
WHAT = "a scores file"
#: sacreBLEU's length diagnostics a scores file keeps beside each BLEU field F (``F_bp``, ``F_ratio``), and a table
#: beside each BLEU column c (``ours_c_bp``, ``ours_c_ratio``).
BLEU_DIAGNOSTICS = ("bp", "ratio")


def scores_dir(results_dir: str | Path, pair: str) -> Path:
    """A task's scores directory in a results directory (results/PRESET)."""
    return layout.under(results_dir, layout.RESULTS_ROOT, DIR_TEMPLATE, pair=pair)


def scores_path(scores_dir: Path, system: str, testset: str) -> Path:
    """Where ``nmt evaluate`` writes the scores of ``system`` on ``testset`` (a task's scores directory)."""
    return layout.under(scores_dir, DIR_TEMPLATE, TEMPLATE, system=system, testset=testset)


def run_scores_path(results_dir: str | Path, pair: str, system: str, testset: str) -> Path:
    """The scores file of ``system`` on ``testset`` of task ``pair`` in a results directory (results/PRESET)."""
    return layout.under(results_dir, layout.RESULTS_ROOT, TEMPLATE, pair=pair, system=system, testset=testset)


def scores_files(results_dir: Path) -> list[Path]:
    """The scores files of a results directory's tasks, if it is one."""
    pattern = layout.relative(layout.RESULTS_ROOT, DIR_TEMPLATE, pair="*") + "/*.json"
    return sorted(results_dir.glob(pattern)) if results_dir.is_dir() else []


def preset_named(results_dir: Path) -> str | None:
    """The preset the first scores file of a results directory names; None where it names none or cannot be read."""
    try:
        preset = read_json(scores_files(results_dir)[0], WHAT).get("preset")
    except (InputError, OSError):
        preset = None
    return preset if isinstance(preset, str) and preset else None


def write_scores(path: str | Path, scores: dict) -> None:
    """A scores file (sorted keys, indent 2, UTF-8, a trailing newline), whole or not at all."""
    write_json_atomic(path, scores)


_VALID: set[tuple] = set()  # (path, size, mtime): scores files found valid (the claims read each many times)


def _file_state(path: Path) -> tuple | None:
    try:
        stat = path.stat()
    except OSError:
        return None  # the reader names the problem
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def read_scores(
    path: str | Path,
    *,
    system: str | None = None,
    testset: str | None = None,
    pair: str | None = None,
    preset: str | None = None,
) -> dict:
    """Read one scores file, checked against the schema; check that its identity fields (when present) match.

    Raises ``InputError`` (a ValueError; `nmt report` says it in one line) naming the file when it is not a
    JSON object, when a field has the wrong type (naming the key: ``bleu_tok: 'high' is not of type 'number',
    'null'``), when an identity field disagrees with what the caller expects, or when a metric value is not a
    finite number.
    """
    path = Path(path)
    # checked against the schema once per file state: checking its thousands of per-sentence counts again each time
    # the claims read it would cost seconds
    state = _file_state(path)
    checked_before = state is not None and state in _VALID
    data = read_json(path, WHAT, schema=None if checked_before else validator(SCHEMA))
    if state is not None:
        _VALID.add(state)
    for key, expected in (("system", system), ("testset", testset), ("pair", pair), ("preset", preset)):
        if expected is not None and key in data and data[key] != expected:
            raise InputError(f"{path}: '{key}' is {data[key]!r}, expected {expected!r}")
    checked = [*KNOWN_COLUMNS, *(f"{c}_{d}" for c in sorted(BLEU_COLUMNS) for d in BLEU_DIAGNOSTICS)]
    for c in checked:
        v = data.get(c)
        if v is not None and not is_number(v):
            raise InputError(f"{path}: {c}: must be a finite number or null (got {v!r})")
    return data
