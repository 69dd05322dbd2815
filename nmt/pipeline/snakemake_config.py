"""What Snakemake's `--config` and `--configfile` may set (the preset, nothing else) and where the preset's name was
given, so that a mistake on Snakemake's command line ends in one line naming it (workflow/rules/common.smk).
Snakemake refuses some keys itself before the workflow runs (a dotted `train.lr=0.1`): docs/presets.md."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

SETTABLE = "preset"


def refused_keys(overrides: Mapping) -> str | None:
    """The one line for ``overrides`` (what `--config` and `--configfile` set) with keys other than the preset, or None.
    Every `nmt` command re-reads params.yaml and the preset itself, so any other override would change what Snakemake
    tracks but not what the commands do."""
    others = sorted(str(key) for key in overrides if key != SETTABLE)
    if not others:
        return None
    return (
        f"--config/--configfile may only set `preset` (got {', '.join(others)}); other settings go in params.yaml "
        "or a preset file (workflow/presets/NAME.yaml); `nmt config --explain` shows where each value comes from"
    )


def where_preset_named(
    command_line: Mapping, overrides: Mapping, configfiles: Iterable[str | Path], params_file: str
) -> str:
    """Where the preset Snakemake runs was named, for an unknown preset's message: `--config preset=NAME`
    (``command_line``), a `--configfile` (``overrides`` holds what both set), or else the params file."""
    if SETTABLE in command_line:
        return f"--config preset={command_line[SETTABLE]}"
    if SETTABLE in overrides:
        return "--configfile " + " ".join(str(path) for path in configfiles)
    return params_file
