"""A rendered report's JSON files: its claims file (layout.REPORT_CLAIMS: the verdicts, the environment and the run's
identity) and its summary (layout.REPORT_SUMMARY: {table id: {system: metrics}}), as `nmt report` writes them and
`nmt compare` and `nmt estimate --claims` read them. A claims file written before a field existed lacks it; its
readers say what they take instead (``weakest`` for ``deciding``, the verdicts for the counts).
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from ..base import layout
from ..base.atomic import write_text_atomic
from ..base.errors import ConfigError
from ..base.files import read_json

CLAIMS_TEMPLATE, SUMMARY_TEMPLATE = layout.REPORT_CLAIMS, layout.REPORT_SUMMARY
CLAIMS_NAME, SUMMARY_NAME = PurePosixPath(CLAIMS_TEMPLATE).name, PurePosixPath(SUMMARY_TEMPLATE).name

_NUMBER = {"type": ["number", "null"]}
# What `nmt compare` and `nmt estimate --claims` read of a report's summary and claims file (the rest of each is the
# report's own business). Of a claim, compare reads the verdict and its interval; estimate (nmt.report.claims.claims_json)
# the seeds that would decide it (with their range from the seed variance's uncertainty, or the assumed spread between
# seeds it was projected from where the claim rests on a single run), the trainings it rests on and their runs.
SUMMARY_SCHEMA = {"type": "object", "additionalProperties": {"type": "object"}}
CLAIMS_SCHEMA = {
    "type": "object",
    "properties": {
        "preset": {"type": "string"},
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string"},
                    "verdict": {"type": ["string", "null"]},
                    "ours_delta": _NUMBER,
                    "ci_low": _NUMBER,
                    "ci_high": _NUMBER,
                    "points": {"type": ["string", "null"]},
                    "deciding": {"type": ["integer", "null"], "minimum": 0},
                    "weakest": {"type": ["integer", "null"], "minimum": 0},
                    "comparisons": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"ours_delta": _NUMBER, "ci_low": _NUMBER, "ci_high": _NUMBER},
                        },
                    },
                    "seeds_needed": {"type": ["integer", "null"], "minimum": 1},
                    "seeds_needed_range": {
                        "type": ["array", "null"],
                        "minItems": 2,
                        "maxItems": 2,
                        "items": {"type": ["integer", "null"], "minimum": 1},
                    },
                    "assumed_seed_ratio": {"type": ["number", "null"], "minimum": 0},
                    "trained": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "required": ["pair", "system"],
                            "properties": {"pair": {"type": "string"}, "system": {"type": "string"}},
                        },
                    },
                    "n_runs": {"type": ["object", "null"], "additionalProperties": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "run": {
            "type": "object",
            "required": ["preset", "corpora", "tables"],
            "properties": {
                "preset": {"type": "string"},
                "partial": {
                    "type": "object",
                    "required": ["runs_in", "runs_planned", "text"],
                    "properties": {
                        "runs_in": {"type": "integer"},
                        "runs_planned": {"type": "integer"},
                        "text": {"type": "string"},
                    },
                },
                "corpora": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["corpus", "digest"],
                        "properties": {"corpus": {"type": "string"}, "digest": {"type": "string"}},
                    },
                },
                "tables": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    },
}
# estimate projects a preset's claims: a file given by its path must say which preset and its claims
ESTIMATE_CLAIMS_SCHEMA = {**CLAIMS_SCHEMA, "required": ["preset", "claims"]}


def report_json(obj: Any) -> str:
    """A report's JSON file as text: keys in the order given, indent 2, UTF-8 as is, a trailing newline; NaN and
    Infinity refused (ValueError)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report_json(path: str | Path, obj: Any) -> None:
    """One of a report's JSON files (:func:`report_json`), whole or not at all."""
    write_text_atomic(path, report_json(obj))


def write_claims(report_dir: str | Path, record: dict) -> None:
    write_report_json(Path(report_dir) / CLAIMS_NAME, record)


def write_summary(report_dir: str | Path, summary: dict) -> None:
    write_report_json(Path(report_dir) / SUMMARY_NAME, summary)


def read_summary(report_dir: Path) -> dict:
    """A report's summary, as far as `nmt compare` reads it (SUMMARY_SCHEMA)."""
    return read_json(Path(report_dir) / SUMMARY_NAME, "a report summary", schema=SUMMARY_SCHEMA)


def read_claims(report_dir: Path) -> dict:
    """A report's claims file, as far as `nmt compare` reads it (CLAIMS_SCHEMA)."""
    return read_json(Path(report_dir) / CLAIMS_NAME, "a claims file", schema=CLAIMS_SCHEMA)


def read_claims_file(path: str | Path) -> dict:
    """A report's claims file given by its path, as far as `nmt estimate --claims` reads it (ESTIMATE_CLAIMS_SCHEMA):
    every problem one ConfigError naming the file."""
    if not Path(path).is_file():
        raise ConfigError(f"{path}: no such file; give the {CLAIMS_NAME} that `nmt report` wrote")
    return read_json(path, "a report's claims file", schema=ESTIMATE_CLAIMS_SCHEMA, error=ConfigError)
