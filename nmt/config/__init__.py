"""Configuration: what the researcher wrote, resolved and checked. A system's configuration (nmt.config.resolve), what
its jobs take from it (nmt.config.task_inputs), the table, figure and claims files and their schemas, the plan."""

from ..base.errors import ConfigError
from ..data.tasks import corpus_for_task
from .resolve import (
    SEED_RUN,
    fingerprint,
    load_figures,
    load_layers,
    load_params,
    load_table,
    merge_preset,
    preset_layers,
    read_yaml,
    schema,
    seed_run,
    seed_runs,
    system_config,
    system_layers,
    validate,
)
from .task_inputs import (
    eflomal_samplers,
    gold_splits,
    prepare_for_task,
    raw_reference_splits,
    task_prepare_layers,
    task_splits,
    tokenized_splits,
    training_inputs,
    unk_credit_option,
    unk_dictionary_release,
)

__all__ = [
    "SEED_RUN",
    "ConfigError",
    "corpus_for_task",
    "eflomal_samplers",
    "fingerprint",
    "gold_splits",
    "load_figures",
    "load_layers",
    "load_params",
    "load_table",
    "merge_preset",
    "prepare_for_task",
    "preset_layers",
    "raw_reference_splits",
    "read_yaml",
    "schema",
    "seed_run",
    "seed_runs",
    "system_config",
    "system_layers",
    "task_prepare_layers",
    "task_splits",
    "tokenized_splits",
    "training_inputs",
    "unk_credit_option",
    "unk_dictionary_release",
    "validate",
]
