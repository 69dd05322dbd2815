"""Resolving a system's configuration: params.yaml + a preset + a table's recipe and row (or a seed run of it) ->
one validated dict, each value with the layer that set it (nmt.settings.origins: `nmt config --explain`).

Both workflow engines and every `nmt` command resolve configuration here, so a system trained by Snakemake and by DVC
sees exactly the same settings. Unknown keys and wrong types are errors that name the offending key (the JSON schema
derived from the declared settings: nmt.settings.sections).
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import jsonschema

from ..base import files
from ..base.errors import ConfigError
from ..settings import PARAMS_SCHEMA
from ..settings.origins import Layer, Layered, Origin
from .figure_files import load_figures as parse_figures
from .table_files import load_table as parse_table


def read_yaml(path: str | Path, what: str = "the file") -> Any:
    """A configuration file (params.yaml, a preset, the schema) through nmt.base.files.read_yaml: strict UTF-8, a key
    given twice and an empty file refused, every problem one ConfigError naming the file and the line."""
    return files.read_yaml(path, what, error=ConfigError)


def schema() -> dict:
    """The JSON schema of a resolved configuration, derived from the declared settings (nmt.settings.sections)."""
    return copy.deepcopy(PARAMS_SCHEMA)


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    # Built once per process: every system of every table is validated, and Snakemake resolves them all at start-up
    # (on a cluster, in every job too).
    return files.strict_validator(PARAMS_SCHEMA)  # numbers finite, integers written as integers


def validate(config: dict, source: str) -> None:
    """Raise ConfigError naming the key path of the first schema violation (deepest first)."""
    as_json = json.dumps(config, sort_keys=True, default=repr)
    if as_json in _VALID:  # a table's systems and seed runs resolve to many equal configurations
        return
    validator = _validator()
    errors = sorted(validator.iter_errors(config), key=lambda e: (-len(e.absolute_path), str(e.path)))
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{source}: bad config key {where}: {files.error_message(err)}")
    if len(_VALID) < 4096:
        _VALID.add(as_json)


_VALID: set[str] = set()  # configurations validated in this process


def load_params(params_path: str | Path, preset: str | None = None) -> dict:
    """params.yaml merged with workflow/presets/{preset}.yaml (preset from the file unless given)."""
    return load_layers(params_path, preset).values


def load_layers(params_path: str | Path, preset: str | None = None) -> Layered:
    """load_params, each value with the layer that set it."""
    params_path = Path(params_path)
    if preset is not None and not preset.strip():  # not "the params file's preset": a name that went missing
        raise ConfigError("preset: an empty name; give one of workflow/presets/ (or none for params.yaml's preset)")
    params = read_yaml(params_path, "the params file")
    if not isinstance(params, dict):
        raise ConfigError(f"{params_path}: expected a mapping at the top level")
    return preset_layers(params, preset, root=params_path.parent, source=str(params_path))


def merge_preset(params: dict, preset: str | None, root: Path, source: str, named_by: str | None = None) -> dict:
    """params (params.yaml as read) merged with workflow/presets/{preset}.yaml (preset from params unless given)."""
    return preset_layers(params, preset, root, source, named_by).values


def preset_layers(params: dict, preset: str | None, root: Path, source: str, named_by: str | None = None) -> Layered:
    """merge_preset, each value with the layer that set it: params.yaml, the preset, or the command line's --preset.
    ``named_by`` says where the preset's name was given, for the message an unknown one gets (Snakemake's `--config`,
    say); by default `--preset NAME` when ``preset`` is given, else the params file."""
    named = preset or params.get("preset")
    if not named:
        raise ConfigError(f"{source}: no preset given and no `preset:` key")
    # the defaults on their own first: a bad default that this preset happens to override is still an error
    validate(params, source)
    preset_file = f"{params['presets_dir']}/{named}.yaml"
    preset_path = root / preset_file
    if not preset_path.exists():
        known = sorted(p.stem for p in preset_path.parent.glob("*.yaml"))
        where = named_by or (f"--preset {preset}" if preset else source)
        raise ConfigError(
            f"{where}: unknown preset {named!r}{_nearest(str(named), known)}; known presets: {', '.join(known)}"
        )
    overlay = read_yaml(preset_path, "a preset")  # an empty one is an error, not params.yaml's recipe unchanged
    if not isinstance(overlay, dict):
        raise ConfigError(f"{preset_path}: expected a mapping at the top level")
    layered = Layered().merge(params, lambda key: Origin(Layer.PARAMS, source, key, "params"))
    layered.merge(overlay, lambda key: Origin(Layer.PRESET, preset_file, key, "preset"))
    if layered.values.get("preset") != named:
        layered.set("preset", named, Origin(Layer.COMMAND_LINE, None, "--preset"))
    validate(layered.values, f"{source} + {preset_path}")
    return layered


def _nearest(name: str, known: list[str]) -> str:
    """ " (did you mean 'tiny'?)" for a misspelt preset, or nothing when no known name is close."""
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _parsed_once(parse):
    """`parse(path)` remembered per file state (path, size, modification time), its ValueErrors as ConfigErrors.
    The plan's collect_* functions (nmt.config.plan) read the same table files many times over; a changed file is
    parsed again. Callers get their own copy."""
    cache: dict[tuple, Any] = {}

    def parsed(path: Path):
        try:
            return parse(path)
        except ValueError as err:
            raise ConfigError(str(err)) from None

    def load(path: str | Path):
        path = Path(path)
        try:
            stat = path.stat()
        except OSError:  # the parser names the missing file
            return parsed(path)
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in cache:
            cache[key] = parsed(path)
        return copy.deepcopy(cache[key])

    return load


load_table = _parsed_once(parse_table)
load_table.__doc__ = (
    "A validated table file (see nmt.config.table_files); problems become ConfigErrors naming the file and row."
)
load_figures = _parsed_once(parse_figures)
load_figures.__doc__ = (
    "A validated figure file (see nmt.config.figure_files); problems become ConfigErrors naming the file and figure."
)


SEED_RUN = re.compile(r"^(?P<system>[A-Za-z0-9_]+)_seed(?P<seed>[0-9]+)$")  # spec.tables.SEED_RUN_NAME


def seed_run(name: str, seed: int) -> str:
    """The name of a system's run with another seed of its `train.seeds` (the first seed's run is the system)."""
    return f"{name}_seed{seed}"


def seed_runs(resolved: dict, name: str) -> list[str]:
    """[name, name_seedB, name_seedC, ...]: every run of a system whose `train.seeds` is [A, B, C, ...]."""
    seeds = resolved["train"]["seeds"] or []
    return [name] + [seed_run(name, seed) for seed in seeds[1:]]


def system_config(config: dict, table: dict, system: str, table_path: str = "table") -> dict:
    """The preset config with one table system's overrides applied, validated (system_layers' values)."""
    return system_layers(Layered(config), table, system, table_path).values


def system_layers(config: Layered, table: dict, system: str, table_path: str = "table") -> Layered:
    """The one resolution of a system's configuration: the preset's (``config``, with the origins of its values where
    known) under the table's recipe and the system's own overrides, validated, each value with the layer that set it.
    ``system`` may also name one of a system's seed runs (SYSTEM_seedN, N one of its `train.seeds` but the first): its
    config with train.seed = N, starting from (or guided by) the same seed's run of the system it starts from, where
    that one has it."""
    systems = table["systems"]
    match = SEED_RUN.match(system)
    if system not in systems and match and match["system"] in systems:
        return _seed_run_layers(config, table, match["system"], int(match["seed"]), table_path)
    if system not in systems:
        raise ConfigError(f"{table_path}: unknown system {system!r}; known systems: {', '.join(systems)}")
    layered = config.copy()
    recipe = table.get("recipe")
    if recipe is not None:  # the paper's recipe as this preset sizes it, under the system's own overrides
        recipes = layered.values.get("recipes") or {}
        if recipe not in recipes:
            raise ConfigError(
                f"{table_path}: recipe {recipe!r} is not defined in preset {layered.values['preset']!r} "
                f"(recipes: {', '.join(recipes) or 'none'})"
            )

        def from_recipe(key: str) -> Origin:
            as_written = f"recipes.{recipe}.{key}"
            written = config.origins.get(as_written)
            return Origin(
                Layer.RECIPE, written.file if written else None, as_written, written.params_file if written else None
            )

        layered.merge(recipes[recipe], from_recipe)
    layered.merge(systems[system] or {}, lambda key: Origin(Layer.TABLE, table_path, f"systems.{system}.{key}"))
    validate(layered.values, f"{table_path}: system {system}")
    seeds = layered.values["train"]["seeds"]
    if seeds:  # the system itself is the run with the first seed
        layered.set("train.seed", seeds[0], Origin(Layer.SEED_RUN, None, "train.seeds[0]"))
    return layered


def _seed_run_layers(config: Layered, table: dict, system: str, seed: int, table_path: str) -> Layered:
    layered = system_layers(config, table, system, table_path)
    train = layered.values["train"]
    if seed not in (train["seeds"] or [])[1:]:
        raise ConfigError(
            f"{table_path}: unknown system {seed_run(system, seed)!r}: {seed} is not one of "
            f"{system}'s train.seeds after the first ({train['seeds']})"
        )
    origin = Origin(Layer.SEED_RUN, None, seed_run(system, seed))
    layered.set("train.seed", seed, origin)

    def same_seed(other: str) -> str:
        """The run of `other` with this seed, where `other` has one: by its own train.seeds when this table defines
        it, else (a system of another table) by the preset's."""
        seeds = (
            system_layers(config, table, other, table_path).values["train"]
            if other in table["systems"]
            else config.values["train"]
        )["seeds"] or []
        return seed_run(other, seed) if seed in seeds[1:] else other

    if isinstance(train["init_from"], dict):
        layered.set("train.init_from.system", same_seed(train["init_from"]["system"]), origin)
    guided = train["guided_alignment"] or {}
    if isinstance(guided.get("from"), dict):
        layered.set("train.guided_alignment.from.system", same_seed(guided["from"]["system"]), origin)
    return layered


def fingerprint(obj: Any) -> str:
    """A short stable hash of a JSON-able object (used to rerun jobs when their settings change)."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
