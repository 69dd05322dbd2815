"""Every setting of params.yaml, declared once: each section a frozen dataclass whose fields carry the type, the
default, the help text and the constraints (nmt.base.declare). params.yaml gives every declared key its default
(tests/cli/test_settings.py checks it) and its help as its comment (`nmt params-yaml`); the presets, recipes and table
rows override them; the JSON schema that validates all of them is :data:`PARAMS_SCHEMA`, derived from :class:`Params`.
Adding a setting: a field in its class here (with `before=` in model/train: the value that means what files written
before it did), its value in params.yaml, and its use. Nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping

from ..base.declare import Section, added, json_schema, setting
from ..base.eflomal_runner import DEFAULT_SAMPLERS
from ..data.task_settings import DataSettings
from .attention_variants import VARIANTS, attentions_help
from .schedule import STOPS

ATTENTIONS = tuple(VARIANTS)  # the variants' registry (nmt.settings.attention_variants)
SCORES = ("dot", "general", "concat", "location")
ARCHITECTURES = ("luong", "rnnsearch")  # nmt.models.registry registers each


@dataclass(frozen=True)
class VerdictSettings(Section):
    """How the claims' verdicts are reached (nmt.report.claims; docs/statistics.md): a claim resting on a system that
    did not pass the convergence gate is inconclusive."""

    SECTION = "verdicts"
    resamples: int = setting(
        10000,
        "bootstrap resamples of the test sentences (and seed runs) per claim; a multiple of "
        "40, so that p-values and 95% intervals agree exactly",
        minimum=40,
        multipleOf=40,
        optional=True,
    )
    converged_within: float = setting(
        0.02,
        "the convergence gate (nmt.settings.schedule.convergence), which a plateau with stop: gate also stops by: a "
        "system converged when the line fitted to the log dev perplexity of its last converged_window evaluations, "
        "its slope taken at its one-sided 97.5% lower bound (the steepest fall they allow), comes at most this "
        "fraction below the line's own lowest point within the next 10 epochs (what may be left), and its last "
        "epoch lowered the best by at most this fraction too (docs/statistics.md gives its error rates)",
        exclusiveMinimum=0,
        maximum=1,
        optional=True,
    )
    converged_window: int = setting(
        11,
        "how many of a system's last evaluations (epochs) the convergence gate fits its "
        "line to; a training with fewer evaluations has not converged",
        minimum=3,
        optional=True,
    )
    assumed_seed_ratio: float = setting(
        1.0,
        "for a claim resting on a single run (no verdict: its spread between seeds is not measured), the seeds "
        "that would decide it are projected as if one run's difference varied between seeds this many times as much "
        "as between test sets: an assumption, not a measurement (docs/statistics.md)",
        minimum=0,
        optional=True,
    )


@dataclass(frozen=True)
class PrepareSettings(Section):
    """How a corpus is prepared (nmt data prepare)."""

    SECTION = "prepare"
    max_len: int = setting(50, "drop training pairs longer than this (either side)", minimum=1)
    src_vocab: int = setting(50000, "the top K source words; the rest become <unk>", minimum=1)
    tgt_vocab: int = setting(50000, "the top K target words; the rest become <unk>", minimum=1)
    tokenize: bool = setting(False, "sacremoses tokenisation of raw text (the demo corpus is pre-tokenised)")
    lowercase: bool = setting(False, "lowercase both sides", optional=True)


@dataclass(frozen=True)
class ModelSettings(Section):
    """params.yaml's `model` section: the architecture of every system."""

    SECTION = "model"
    layers: int = setting(4, "stacked LSTM layers", minimum=1)
    hidden: int = setting(1000, "LSTM (rnnsearch: GRU) size", minimum=1)
    embed: int = setting(1000, "embedding size", minimum=1)
    dropout: float = setting(
        0.0, "dropout on non-recurrent connections (Zaremba et al., 2015)", minimum=0, exclusiveMaximum=1
    )
    reverse: bool = setting(False, "feed the source backwards")
    attention: Literal[ATTENTIONS] = setting("none", attentions_help())
    score: Literal[SCORES] = setting("location", "the attention score: dot | general | concat | location")
    input_feed: bool = setting(False, "feed the previous attentional vector to the decoder's input (Luong et al. 3.3)")
    max_src_len: int = setting(50, "size of the location-based attention vector", minimum=1)
    window: int = setting(10, "local attention: D, the window is [p_t - D, p_t + D]", minimum=0, optional=True)
    arch: Literal[ARCHITECTURES] = setting(
        "luong",
        "luong: the stacked-LSTM model (layers, attention, score, input_feed, ...); rnnsearch: Bahdanau et "
        "al.'s (2015) model: bidirectional-GRU encoder, GRU decoder, maxout (nmt/models/rnnsearch.py; reads hidden, "
        "embed, dropout, attention_dim, target_foresight, attention_noise)",
        before="luong",
        optional=True,
    )
    attention_dim: int = setting(
        0, "rnnsearch: size of the attention layer (0 = hidden)", minimum=0, before=0, optional=True
    )
    target_foresight: bool = setting(
        False,
        "rnnsearch: the current target word's embedding enters the attention "
        "energies (Peter et al. 2017); such a model aligns given a reference and cannot "
        "translate",
        before=False,
        optional=True,
    )
    attention_noise: float = setting(
        0.0,
        "rnnsearch, monotonic: standard deviation of Gaussian noise added to the "
        "attention energies in training (0 = off; Raffel et al. add N(0, 1) before the "
        "sigmoid)",
        minimum=0,
        before=0.0,
        optional=True,
    )
    energy: Literal["eq15", "eq16", "eq17"] = setting(
        "eq17",
        "monotonic attention's energy (Raffel et al. 2017): eq15 Bahdanau's v^T tanh(W s + V h + b); eq16 the "
        "same with v normalised, scale g and bias r; eq17 g s^T W h + r",
        before="eq17",
        optional=True,
    )
    energy_bias: float = setting(
        -1.0,
        "monotonic attention, eq16/eq17: initial value of the scalar bias r (negative: the paper used -1 to -4)",
        before=-1.0,
        optional=True,
    )


_SYSTEM_REF = {
    "type": "object",
    "additionalProperties": False,
    "required": ["system"],
    "properties": {"system": {"type": "string", "minLength": 1}},
}


@dataclass(frozen=True)
class TrainSettings(Section):
    """params.yaml's `train` section: how every system is trained."""

    SECTION = "train"
    RETIRED = MappingProxyType({"until_flat": None})  # became train.plateau
    seed: int = setting(1, "the random seed of the run")
    seeds: tuple[int, ...] | None = setting(
        None,
        "train every system once per seed (the first is the system itself, each other one a run named "
        "SYSTEM_seedN); tables show mean +/- standard deviation and claims use the spread (null: train.seed only)",
        optional=True,
        minItems=1,
        uniqueItems=True,
    )
    optimizer: Literal["sgd", "adam", "adadelta"] = setting("sgd", "sgd | adam | adadelta")
    lr: float = setting(1.0, "the learning rate", exclusiveMinimum=0)
    epochs: int = setting(10, "epochs of the fixed schedule", minimum=1)
    halve_after: int = setting(5, "halve the learning rate every epoch after this one", minimum=0)
    dropout_schedule: Mapping | None = setting(
        {"epochs": 12, "halve_after": 8},
        "the fixed schedule of models with dropout (Luong et al. train them longer: 12 epochs, halving after epoch 8)",
        optional=True,
        schema={
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "epochs": {"type": "integer", "minimum": 1},
                "halve_after": {"type": "integer", "minimum": 0},
            },
        },
    )
    batch_size: int = setting(128, "sentences per batch", minimum=1)
    batch_tokens: int = setting(
        0,
        "0: batches of batch_size sentences (the papers'); N > 0: batches of at most N "
        "padded tokens (fairseq's max_tokens: sentences x longest side)",
        minimum=0,
        before=0,
        optional=True,
    )
    engine: Literal["fast", "eager"] = setting(
        "fast",
        "fast: hand-written backward passes for the step-by-step decoders and the output layer fused with its "
        "loss; eager: the plain autograd path (the reference the fast one is tested against; nmt.engine.train_step)",
        before="fast",
        optional=True,
    )
    precision: Literal["auto", "fp32", "bf16"] = setting(
        "auto",
        "auto: bf16 autocast on a GPU that supports it; on a CPU, bf16 where an update of the model is "
        "measured at least 1.1x faster in it (nmt.engine.cpu_precision), else fp32; fp32; bf16",
        before="auto",
        optional=True,
    )
    cuda_graphs: Literal["auto", True, False] = setting(
        "auto",
        "auto: on a CUDA device, the decoder, output layer and loss of Luong et al.'s input-feeding models "
        "(global, local-m or local-p attention) are replayed from CUDA graphs (nmt.engine.cuda_graphs); other "
        "models and devices train without. true: the same, and a model or device that cannot have them says so in "
        "one line. false: never",
        before="auto",
        optional=True,
    )
    clip_norm: float = setting(5.0, "clip the gradient's norm to this", minimum=0)
    init_range: float = setting(0.1, "uniform initialisation in [-r, r]", minimum=0)
    checkpoint_every: int = setting(
        0, "also checkpoint every N updates (0 = only at epoch ends and on SIGTERM)", minimum=0, optional=True
    )
    init_from: str | Mapping | None = setting(
        None,
        "a trained model.pt or checkpoint.pt whose parameters (same name and shape) replace the fresh "
        "initialisation, or {system: NAME}: the model of system NAME of the same task (the workflow trains it first); "
        "null = none",
        before=None,
        optional=True,
        schema={"anyOf": [{"type": ["string", "null"]}, _SYSTEM_REF]},
    )
    trainable: Literal["all", "attention"] = setting(
        "all",
        "all, or attention: only the attention layer's parameters are updated (the rest stays bit-identical; "
        "Peter et al.'s frozen en-/decoder)",
        before="all",
        optional=True,
    )
    max_updates: int = setting(
        0, "stop after this many updates in all (0 = no limit)", minimum=0, before=0, optional=True
    )
    eval_every: int = setting(
        0,
        "also evaluate the dev perplexity every N updates (0: at the end of each epoch only)",
        minimum=0,
        before=0,
        optional=True,
    )
    keep: Literal["last", "best"] = setting(
        "last",
        "which parameters model.pt holds: the last (last) or those of the best evaluation by best_by (best; "
        "Peter et al. keep the best of their evaluations every 10K updates)",
        before="last",
        optional=True,
    )
    best_by: Literal["dev_ppl", "dev_bleu"] = setting(
        "dev_ppl",
        "with keep: best, what ranks the evaluations: the lowest dev perplexity (dev_ppl) or the highest "
        "tokenised BLEU of a greedy decode of the dev set (dev_bleu; fairseq's and joeynmt's choice)",
        before="dev_ppl",
        optional=True,
    )
    plateau: Mapping | None = setting(
        None,
        "the reduced presets' one training rule (nmt.settings.schedule): after every epoch, an epoch that lowers the best "
        "dev perplexity so far by at most the fraction `within` is a stall; each of the first `halvings` stalls halves "
        "the learning rate; at the final rate, training ends at the first epoch that passes the convergence gate "
        "(`stop: gate`: verdicts.converged_within and converged_window, so that every run the rule stops passes it) "
        "or, with `stop: stalls`, once the last `patience` evaluations were all stalls (in a row); max_epochs ends it "
        "in any case (with keep: best, model.pt is the best evaluation). epochs, halve_after and dropout_schedule are "
        "then not read. null: the fixed schedule, as the papers train. The reduced presets': {within: 0.01, "
        "halvings: 2, stop: gate, max_epochs: 30}",
        before=None,
        within={"stop": "stalls"},
        optional=True,
        schema={
            "type": ["object", "null"],
            "additionalProperties": False,
            "required": ["within", "halvings", "max_epochs"],
            "properties": {
                "within": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "halvings": {"type": "integer", "minimum": 0},
                "stop": {
                    "enum": list(STOPS),
                    "description": "what ends training at the final rate: the convergence gate's first pass (gate) "
                    "or `patience` stalls in a row (stalls; a plateau recorded before this key existed)",
                },
                "patience": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "with stop: stalls, consecutive stalls at the final learning rate that end "
                    "training (a plateau recorded before this key existed means 1)",
                },
                "max_epochs": {"type": "integer", "minimum": 1},
            },
        },
    )
    guided_alignment: Mapping | None = setting(
        {"weight": 0.0, "file": "train.links"},
        "Chen et al. (2016): loss = cross-entropy + weight * alignment "
        "cross-entropy against the links of `file` (Pharaoh, one line per prepared training pair; relative to the data "
        "directory), or `from`: the aligner (of the table's alignment.aligners), or {system: NAME} a trained system "
        "of the task, whose links of the prepared training pairs the workflow computes first (weight 0 = off)",
        before=None,
        optional=True,
        schema={
            "type": "object",
            "additionalProperties": False,
            "required": ["weight"],
            "properties": {
                "weight": {"type": "number", "minimum": 0},
                "file": {"type": "string", "minLength": 1},
                "from": {"anyOf": [{"type": ["string", "null"]}, _SYSTEM_REF]},
            },
        },
    )

    @property
    def guided_weight(self) -> float:
        """The guided-alignment loss's weight (0: off, also where the setting is null)."""
        return float((self.guided_alignment or {}).get("weight") or 0.0)


@dataclass(frozen=True)
class TranslateSettings(Section):
    """How every system is decoded (a recipe may change it: Peter et al.'s beam 12)."""

    SECTION = "translate"
    beam: int = setting(5, "beam size (the paper does not state its own; 5 is the common default)", minimum=1)
    max_len_ratio: float = setting(2.0, "stop a hypothesis after ratio * source length + 10 tokens", exclusiveMinimum=0)
    batch_size: int = setting(64, "sentences decoded together", minimum=1)


@dataclass(frozen=True)
class Recipe(Section):
    """A named training recipe a table file picks with `recipe:` (e.g. rnnsearch: Bahdanau et al.'s model and
    AdaDelta), merged over model/train before the table's own system overrides."""

    model: Mapping = setting({}, "model settings", optional=True)
    train: Mapping = setting({}, "train settings", optional=True)
    translate: Mapping = setting(
        {}, "how the recipe's systems are decoded (e.g. Peter et al.'s beam 12)", optional=True
    )


@dataclass(frozen=True)
class JobResources(Section):
    """What one kind of job asks a cluster scheduler for."""

    gpus: int = setting(help="GPUs per job (SLURM --gpus)", minimum=0)
    mem_mb: int = setting(help="memory per job in MB (--mem)", minimum=1)
    runtime: int = setting(
        help="wall-time limit in minutes (--time); a training that reaches it checkpoints (SLURM "
        "sends SIGTERM first) and its resubmitted job resumes, so it need not cover a whole "
        "training",
        minimum=1,
    )
    gpu_model: str | None = setting(
        None,
        "a GPU type the cluster knows (--gpus=MODEL:N)",
        optional=True,
        schema={"type": "string", "pattern": "^[A-Za-z0-9_.]+$"},
    )


@dataclass(frozen=True)
class ClusterSettings(Section):
    """What each kind of job asks a cluster scheduler for (the SLURM profile, profiles/slurm; docs/clusters.md); a run
    on one machine ignores it. train: nmt train; decode: the other jobs that run a model; cpu: everything else."""

    SECTION = "cluster"
    train: JobResources = setting(
        JobResources(gpus=1, mem_mb=32000, runtime=2880),
        "nmt train (the default: the paper's 4x1000 LSTMs, 50K vocabularies, 4.5M pairs on one GPU, days per system)",
    )
    decode: JobResources = setting(
        JobResources(gpus=1, mem_mb=16000, runtime=480), "translation, forced decoding for alignments and heat maps"
    )
    cpu: JobResources = setting(
        JobResources(gpus=0, mem_mb=32000, runtime=720),
        "data, eflomal, scoring, report, benchmarks (the default: tokenising and aligning 4.5M "
        "pairs with eflomal take hours)",
    )


@dataclass(frozen=True)
class EflomalSettings(Section):
    """eflomal, the statistical aligner (unk dictionaries, Table 6's and Peter Table 1's baselines, guided alignment's
    links)."""

    SECTION = "eflomal"
    samplers: int = setting(
        DEFAULT_SAMPLERS,
        "independent samplers whose link marginals it averages (eflomal's own default); each costs one full run",
        minimum=1,
        optional=True,
    )


@dataclass(frozen=True)
class UnkSettings(Section):
    """unk replacement (Luong et al. 2015): an <unk> takes the dictionary translation (or a copy) of the source word
    credited with it, by the rule alignment extraction uses (footnote 14, which sits on the unk-replacement sentence:
    content-based scores credit the step that reads the word, location-based ones the step that predicts it)."""

    SECTION = "unk"
    credit: Literal[None, "read", "predicted"] = setting(
        None,
        "unk replacement's crediting of attention: null = each model's own rule (footnote 14); read | "
        "predicted: that rule for every model, to compare",
        optional=True,
    )
    dictionary: Literal["eflomal", "stanford"] = setting(
        "eflomal",
        "where unk replacement's dictionary comes from: eflomal (links of the training pairs) or stanford "
        "(the dictionary the task's corpus releases, data.tasks.{task}.unk_dictionary; eflomal where it releases "
        "none)",
        optional=True,
    )


@dataclass(frozen=True)
class AttentionBench(Section):
    """`nmt bench attention`: per-step cost of global vs local attention (Luong et al. 3.2)."""

    lengths: tuple[int, ...] = setting(
        (50, 100, 200, 500, 1000), "source lengths S", minItems=1, items={"type": "integer", "minimum": 1}
    )
    hidden: int = setting(1000, "the paper's model size", minimum=1)
    batch: int = setting(128, "the paper's batch: one query per sentence per step", minimum=1)
    window: int = setting(10, "D", minimum=1)
    score: Literal[SCORES] = setting("general", "the attention score")
    min_time: float = setting(0.3, "seconds of timed calls per measurement (at least 3 calls)", minimum=0)


@dataclass(frozen=True)
class MonotonicBench(Section):
    """`nmt bench monotonic`: softmax vs hard monotonic attention (Raffel et al. 2017, appendix F)."""

    input_lengths: tuple[int, ...] = setting(
        (4, 8, 16, 32, 64, 128, 512, 1024),
        "memory lengths T of the context grid",
        minItems=1,
        items={"type": "integer", "minimum": 1},
    )
    output_lengths: tuple[int, ...] = setting(
        (4, 8, 16, 32, 64, 128, 512, 1024), "output lengths U", minItems=1, items={"type": "integer", "minimum": 1}
    )
    dim: int = setting(256, "the paper's d: memory entries and decoder states", minimum=1)
    min_time: float = setting(0.1, "seconds of timed calls per method and grid cell (10 samples)", minimum=0)
    decode_lengths: tuple[int, ...] = setting(
        (16, 32, 64, 128, 256, 512, 1024),
        "whole greedy decoding: source length L = output length U",
        minItems=1,
        items={"type": "integer", "minimum": 1},
    )
    decode_hidden: int = setting(256, "embedding and LSTM size of the decoding models", minimum=1)
    decode_layers: int = setting(2, "LSTM layers of the decoding models", minimum=1)
    decode_vocab: int = setting(1000, "vocabulary of the decoding models", minimum=5)
    decode_repeats: int = setting(5, "timed decodings per model and length (median)", minimum=1)


@dataclass(frozen=True)
class BenchSettings(Section):
    """Speed measurements that the report shows (run by the DAG, one CPU thread unless a GPU is used)."""

    SECTION = "bench"
    attention: AttentionBench = setting(AttentionBench(), AttentionBench.__doc__, optional=True)
    monotonic: MonotonicBench = setting(MonotonicBench(), MonotonicBench.__doc__, optional=True)


@dataclass(frozen=True)
class Params(Section):
    """params.yaml as a whole (merged with a preset: the resolved configuration)."""

    preset: str = setting(
        help="the preset, workflow/presets/{preset}.yaml, merged over params.yaml's defaults "
        "(another one: `snakemake --config preset=tiny`; for DVC, set it here and run "
        "`nmt dvc-yaml`: DVC cannot pick stages by a value, so `dvc exp run -S preset=...` is "
        "stopped by the plan stage)",
        pattern="^[A-Za-z0-9_-]+$",
    )
    tables: tuple[str, ...] = setting(help="the paper tables (workflow/tables/*.yaml) the run makes", minItems=1)
    presets_dir: str = setting("workflow/presets", "where the presets are")
    description: str = setting("", "the preset's one-line description (the report shows it)", optional=True)
    figures: tuple[str, ...] = setting(
        (), "figure files (workflow/figures/*.yaml): paper figures drawn from the tables' systems", optional=True
    )
    claims: tuple[str, ...] = setting(
        (), "claims files (workflow/claims/*.yaml): the papers' findings the report gives a verdict on", optional=True
    )
    verdicts: VerdictSettings = setting(VerdictSettings(), VerdictSettings.__doc__, optional=True)
    recipes: Mapping[str, Recipe] = setting(
        {},
        "named training recipes a table file picks with `recipe:`, merged over "
        "model/train before the table's own system overrides, so a preset can size "
        "one paper's models without touching another's",
        optional=True,
    )
    data: DataSettings = setting(DataSettings(), DataSettings.__doc__, optional=True)
    prepare: PrepareSettings = setting(PrepareSettings(), PrepareSettings.__doc__)
    model: ModelSettings = setting(ModelSettings(), ModelSettings.__doc__)
    train: TrainSettings = setting(TrainSettings(), TrainSettings.__doc__)
    translate: TranslateSettings = setting(TranslateSettings(), TranslateSettings.__doc__)
    cluster: ClusterSettings = setting(ClusterSettings(), ClusterSettings.__doc__, optional=True)
    eflomal: EflomalSettings = setting(EflomalSettings(), EflomalSettings.__doc__, optional=True)
    unk: UnkSettings = setting(UnkSettings(), UnkSettings.__doc__, optional=True)
    bench: BenchSettings = setting(BenchSettings(), BenchSettings.__doc__, optional=True)


#: The JSON schema of a resolved configuration (params.yaml, a preset, a recipe, a table row's overrides).
PARAMS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "nmt pipeline parameters",
    **json_schema(Params),
}

#: The model/train sections, by name: the sections a model file or checkpoint records.
RECORDED = {"model": ModelSettings, "train": TrainSettings}
# Keys added to `model`/`train` after version 1, with the value that means "as before" (each field's `before`).
ADDED = {name: added(cls) for name, cls in RECORDED.items()}
