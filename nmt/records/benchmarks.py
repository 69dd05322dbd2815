"""Speed measurements: a run's benchmark files (layout.BENCHMARK, `nmt bench attention|monotonic`, read by the
report's speed sections and its speed-up claims) and the throughput and translation-speed files a user measures and
commits (layout.THROUGHPUT, layout.TRANSLATION_SPEED: `nmt bench train|translate`; `nmt estimate` reads the first).
"""

from __future__ import annotations

from pathlib import Path

from ..base import layout
from ..base.atomic import write_json_atomic
from ..base.errors import ConfigError
from ..base.files import read_json
from ..config.schema import validator

BENCHMARK_SCHEMA, THROUGHPUT_SCHEMA = "benchmark", "throughput"  # nmt/config/schemas/NAME.schema.yaml


def benchmark_path(results_dir: str | Path, name: str) -> Path:
    """The file of benchmark ``name`` (`nmt bench NAME`) in a results directory (results/PRESET)."""
    return layout.under(results_dir, layout.RESULTS_ROOT, layout.BENCHMARK, name=name)


def throughput_path(preset: str, device: str) -> str:
    """Where `nmt bench train` writes a preset's throughput on a kind of device (relative to the repository)."""
    return layout.path(layout.THROUGHPUT, preset=preset, device=device)


def translation_speed_path(preset: str, device: str) -> str:
    """Where `nmt bench translate` writes a preset's translation speed on a kind of device."""
    return layout.path(layout.TRANSLATION_SPEED, preset=preset, device=device)


def write_measurement(path: str | Path, result: dict) -> None:
    """A benchmark's, throughput's or translation speed's result (sorted keys, indent 2, a trailing newline)."""
    write_json_atomic(path, result)


def read_benchmark(path: str | Path, kind: str) -> dict:
    """A benchmark file of ``kind`` (attention or monotonic, the schema's definition of it): InputError naming the
    file and the line, or the key."""
    return read_json(path, "a benchmark file", schema=validator(BENCHMARK_SCHEMA, kind))


def read_throughput(path: str | Path) -> dict:
    """A throughput file `nmt bench train` wrote: every problem one ConfigError naming the file (and the line or
    key)."""
    if not Path(path).is_file():
        raise ConfigError(f"{path}: no such file; write it with `nmt bench train`")
    return read_json(path, "a throughput file", schema=validator(THROUGHPUT_SCHEMA), error=ConfigError)
