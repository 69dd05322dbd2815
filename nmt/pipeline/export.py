"""A run's small files, copied out of its results directory: what a published reference run keeps
(docs/reproductions/PRESET/results) and what the report is rendered from again, without the models and
checkpoints.

A run made piece by piece (one seed on one machine, the next seed later) is exported one part at a time into the
same directory (nmt.pipeline.plan.seed_part says which files are a seed's); the parts never share a file, so a
file that is already there with other content means two different runs, and is refused unless asked to replace it.
"""
from __future__ import annotations

from pathlib import Path

from .. import layout
from ..data.text import write_bytes_atomic
from ..errors import InputError
from . import plan


def run_files(config: dict, root: str | Path, seeds: list[int] | None = None) -> list[str]:
    """The files of the given seeds' parts (all of the preset's seeds by default), as paths below the results
    directory (``en-de/scores/base.test.json``)."""
    prefix = layout.path(layout.RESULTS_ROOT, preset=config["preset"]) + "/"
    files: dict[str, None] = {}
    for seed in seeds or plan.preset_seeds(config):
        for path in plan.seed_part(config, root, seed):
            files[path[len(prefix):]] = None
    return list(files)


def export_run(config: dict, root: str | Path, results: str | Path, dest: str | Path,
               seeds: list[int] | None = None, replace: bool = False) -> dict[str, int]:
    """Copy the seeds' files from ``results`` (results/PRESET) to the same places below ``dest``.

    Every file is checked before any is copied: a file missing from ``results`` (the part is not finished) or one
    that ``dest`` holds with other content (unless ``replace``) is an InputError naming it, and nothing is written.
    Returns {"copied": n, "unchanged": n}."""
    results, dest = Path(results), Path(dest)
    files = run_files(config, root, seeds)
    missing = [f for f in files if not (results / f).is_file()]
    if missing:
        raise InputError(f"{results / missing[0]}: missing ({len(missing)} of the {len(files)} files to export are); "
                         "finish the run first (`nmt seed-targets` names its files)")
    copied = unchanged = 0
    planned = []
    for f in files:
        data = (results / f).read_bytes()
        target = dest / f
        if target.is_file():
            if target.read_bytes() == data:
                unchanged += 1
                continue
            if not replace:
                raise InputError(f"{target}: already there with other content (another run's?); "
                                 "nothing was copied (--replace overwrites it)")
        planned.append((target, data))
    for target, data in planned:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(target, data)
        copied += 1
    return {"copied": copied, "unchanged": unchanged}
