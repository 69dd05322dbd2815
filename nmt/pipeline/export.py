"""A run's small files, copied out of its results directory: what a published reference run keeps
(docs/reproductions/PRESET/results) and what the report is rendered from again, without the models and
checkpoints.
Details: docs/internals/pipeline.md."""

from __future__ import annotations

from pathlib import Path

from ..base.atomic import write_bytes_atomic
from ..base.errors import InputError
from ..data.staging import staged_directory
from ..records.parts import PartIdentity, run_files


def export_run(
    config: dict,
    root: str | Path,
    results: str | Path,
    dest: str | Path,
    seeds: list[int] | None = None,
    replace: bool = False,
) -> dict[str, int]:
    """Copy the seeds' files from ``results`` (results/PRESET) to the same places below ``dest``.

    Every file is checked before any is copied: a file missing from ``results`` (the part is not finished), one
    of another run (nmt.records.parts.PartIdentity.check), or one that ``dest`` holds with other content (unless
    ``replace``) is an InputError naming it, and nothing is written; then ``dest`` is replaced whole, with the new
    files. Returns {"copied": n, "unchanged": n}."""
    results, dest = Path(results), Path(dest)
    files = run_files(config, root, seeds)
    missing = [f for f in files if not (results / f).is_file()]
    if missing:
        raise InputError(
            f"{results / missing[0]}: missing ({len(missing)} of the {len(files)} files to export are); "
            "finish the run first (`nmt seed-targets` names its files)"
        )
    identity = PartIdentity(config, root)
    for f in files:
        identity.check(results / f, f, "nothing was exported")
    exported = set(files)
    for f in run_files(config, root):  # the other parts already there: of the same preset
        if f not in exported and (dest / f).is_file():
            identity.check(
                dest / f, f, "the destination holds another run's files; nothing was exported", preset_only=True
            )
    unchanged = 0
    planned = []
    for f in files:
        data = (results / f).read_bytes()
        target = dest / f
        if target.is_file():
            if target.read_bytes() == data:
                unchanged += 1
                continue
            if not replace:
                raise InputError(
                    f"{target}: already there with other content (another run's?); "
                    "nothing was copied (--replace overwrites it)"
                )
        planned.append((f, data))
    if planned:
        with staged_directory(dest, own=lambda entry: False) as staging:  # the rest of dest is kept
            for f, data in planned:
                write_bytes_atomic(staging / f, data)
    return {"copied": len(planned), "unchanged": unchanged}
