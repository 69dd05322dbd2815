"""Jobs as data: every job of a preset's plan as one record, built once here, that both engines read.
Details: docs/internals/pipeline.md."""

from __future__ import annotations

import re
import shlex
import string
from dataclasses import dataclass, field
from itertools import takewhile
from pathlib import Path
from typing import Mapping

from .. import config as cfg
from ..align.statistical import aligner_label
from ..base import eflomal_runner, layout
from ..config import plan
from ..settings import Params, TrainSettings, comparable_settings
from ..settings.origins import Layer, Layered, leaf_keys
from ..settings.schedule import stopping_gate, unread_keys
from .priorities import prioritised

LOGS = "logs/{preset}"
#: what a job asks a cluster for (the preset's `cluster` section): a training, a job that runs a model (a GPU
#: where the preset gives decoding one), or a CPU job
KINDS = ("train", "decode", "cpu")


@dataclass(frozen=True)
class Step:
    """What every job of a step shares. ``outputs``: named patterns of one job's files, whose wildcards are the
    job's fields (empty for a step whose jobs each write their own list of files: one rule per job)."""

    name: str
    kind: str
    log: str
    outputs: Mapping[str, str] = field(default_factory=dict)
    threads: bool = False  # its commands take --threads (a job's thread count)
    device: bool = False  # its commands run a model and take --device
    timing: str | None = None  # where Snakemake records the job's run time (`benchmark:`)
    exclusive: bool = False  # a speed measurement: nothing runs beside it on one machine
    directory: bool = False  # its one output is a directory


def _timing(step: str, name: str) -> str:
    return layout.pattern(layout.JOB_TIMING, step=step, name=name)


STEPS = {
    step.name: step
    for step in (
        # get: generate the synthetic corpus, or fetch a registry corpus (mirror or network, verified by sha256);
        # prepare: tokenise, filter, vocabularies, binarise. Each task's corpus has its own splits: one rule per task.
        Step("corpus", "cpu", LOGS + "/{pair}/corpus.log"),
        Step("prepare", "cpu", LOGS + "/{pair}/prepare.log"),
        # the word dictionary of unk replacement: eflomal's links of the training pairs, or the corpus' released one
        Step("unk_dictionary", "cpu", LOGS + "/{pair}/unk_dictionary.log", {"dictionary": layout.UNK_DICTIONARY}),
        # the links guided alignment training reads: a statistical aligner's or a trained system's (Peter et al.)
        Step(
            "align_training_data",
            "cpu",
            LOGS + "/{pair}/align/{system}.train.log",
            {"links": layout.pattern(layout.ALIGNER_LINKS, split="train")},
        ),
        Step(
            "align_training_model",
            "decode",
            LOGS + "/{pair}/align/{system}.train.log",
            {"links": layout.pattern(layout.LINKS, split="train")},
            threads=True,
            device=True,
        ),
        # one training per system of the preset's tables; rerun after a kill, it resumes from checkpoint.pt
        Step(
            "train",
            "train",
            LOGS + "/{pair}/train/{system}.log",
            {"model": layout.MODEL, "metrics": layout.METRICS, "meta": layout.MODEL_INFO},
            threads=True,
            device=True,
            timing=_timing("train", "{system}"),
        ),
        # each test set decoded by each system, ensemble and table's decoding of a system; beside the translation,
        # per output word, the source word attended to most (what unk replacement needs)
        Step(
            "translate",
            "decode",
            LOGS + "/{pair}/translate/{system}.{testset}.log",
            {"hyp": layout.TRANSLATION, "positions": layout.POSITIONS},
            threads=True,
            device=True,
            timing=_timing("translate", "{system}.{testset}"),
        ),
        # BLEU before and after unk replacement, chrF, and test perplexity (trained systems)
        Step(
            "evaluate",
            "cpu",
            LOGS + "/{pair}/evaluate/{system}.{testset}.log",
            {"scores": layout.SCORES, "unk": layout.UNK_TRANSLATION},
            threads=True,
            device=True,
        ),
        # a figure's attention weights of forcing a reference through a model, or a statistical aligner's links
        Step(
            "attention_map",
            "decode",
            LOGS + "/{pair}/attention/{system}.{split}.log",
            {"map": layout.ATTENTION},
            threads=True,
            device=True,
        ),
        Step(
            "alignment_map",
            "cpu",
            LOGS + "/{pair}/attention/{system}.{split}.log",
            {"map": layout.ATTENTION},
            device=True,
        ),
        # alignment tables: a model's links of the gold-aligned split by forced decoding (both directions merged where
        # the table says so), or a statistical aligner's; AER/SAER against the gold links
        Step(
            "align_model",
            "decode",
            LOGS + "/{pair}/align/{system}.{split}.log",
            {"links": layout.LINKS, "soft": layout.SOFT_LINKS, "predicted": layout.PREDICTED_LINKS},
            threads=True,
            device=True,
        ),
        Step(
            "align_merge",
            "cpu",
            LOGS + "/{pair}/align/{system}.{split}.merge.log",
            {"links": layout.MERGED_LINKS, "predicted": layout.MERGED_PREDICTED_LINKS},
        ),
        Step("align_statistical", "cpu", LOGS + "/{pair}/align/{system}.{split}.log", {"links": layout.ALIGNER_LINKS}),
        Step(
            "align_score",
            "cpu",
            LOGS + "/{pair}/align/{system}.{split}.score.log",
            {"scores": layout.pattern(layout.SCORES, testset="{split}")},
        ),
        # the report's speed measurements; each times one thread, alone on the machine
        Step(
            "bench_attention",
            "cpu",
            LOGS + "/bench_attention.log",
            {"timings": layout.pattern(layout.BENCHMARK, name="attention")},
            device=True,
            exclusive=True,
        ),
        Step(
            "bench_monotonic",
            "cpu",
            LOGS + "/bench_monotonic.log",
            {"timings": layout.pattern(layout.BENCHMARK, name="monotonic")},
            exclusive=True,
        ),
        # every table and figure of the preset, the papers' numbers beside ours, and the claims' verdicts
        Step("report", "cpu", LOGS + "/report.log", {"report": layout.REPORT}, directory=True),
    )
}


@dataclass(frozen=True)
class Job:
    """One job. ``name``: STEP.TASK.NAME... (DVC's stage; `dvc repro --glob 'train.*'` runs a step).
    ``fields``: the values of its step's wildcards ({preset} aside). ``params``: DVC's params of the
    configuration keys its commands read beyond their arguments; ``settings``: a digest of the settings it reads,
    so that Snakemake reruns it when they change. ``reads``: directories a command reads whole (DVC depends on
    them, not on the files inside); ``directory``: the directory it writes whole (DVC's one output).
    ``keyed_inputs``: inputs it reads only some keys of, which ``params`` and ``settings`` name (a training's table
    file: its own system's entry), so that a change elsewhere in them reruns nothing: Snakemake ignores their time
    (`ancient`), DVC depends on those keys and not on the file.
    ``persistent``: files it writes and keeps across reruns (a training's checkpoint); ``side_outputs``: files it
    writes that no job reads (a training's curves as CSV), DVC's outputs all the same (cached and cleared with the
    others). ``metrics`` and ``plots`` (images): files among its outputs, or inside the directory it writes, that
    `dvc metrics show` and `dvc plots show` show."""

    step: Step
    name: str
    fields: tuple[tuple[str, str], ...]
    commands: tuple[tuple[str, ...], ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    log: str
    params: tuple = ()
    settings: str = ""
    reads: tuple[str, ...] = ()
    directory: str | None = None
    persistent: tuple[str, ...] = ()
    keyed_inputs: tuple[str, ...] = ()
    side_outputs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    priority: int = 0  # the order a scheduler starts jobs in, higher first (nmt.pipeline.priorities)

    def command_lines(self, threads: int | str, device: str) -> list[str]:
        """Each command as a shell line, with the engine's thread count and device option ("" or " --device
        cpu") where its step's commands take them."""
        return [
            shlex.join(argv)
            + (f" --threads {threads}" if self.step.threads else "")
            + (device if self.step.device else "")
            for argv in self.commands
        ]

    @property
    def rule(self) -> str:
        """The Snakemake rule that runs it: its step's, or STEP_TASK for a step whose jobs each have a rule."""
        if self.step.outputs:
            return self.step.name
        return f"{self.step.name}_{dict(self.fields)['pair'].replace('-', '_')}"

    def shell(self, threads: int | str, device: str) -> str:
        """The commands as one shell command (several run one after the other, stopping at a failure)."""
        lines = self.command_lines(threads, device)
        return lines[0] if len(lines) == 1 else "(" + " && ".join(lines) + ")"

    def command_words(self) -> list[tuple[str, ...]]:
        """The words that name each command, e.g. ("align", "extract"): what nmt.cli.code_deps looks up."""
        return list(
            dict.fromkeys(tuple(takewhile(lambda w: not w.startswith("-"), argv[1:])) for argv in self.commands)
        )


class Jobs:
    """Every job of a preset's plan, in the order the pipeline runs its steps; found by step and wildcards."""

    def __init__(self, jobs: list[Job]):
        self.all = jobs
        self._by_key = {(job.step.name, job.fields): job for job in jobs}
        assert len(self._by_key) == len(jobs) == len({job.name for job in jobs}), "two jobs of one name"

    def __iter__(self):
        return iter(self.all)

    def of(self, step: str) -> list[Job]:
        return [job for job in self.all if job.step.name == step]

    def find(self, step: str, wildcards: Mapping[str, str]) -> Job:
        """The job of `step` whose fields are these wildcards ({preset} aside)."""
        return self._by_key[(step, tuple(sorted((k, v) for k, v in dict(wildcards).items() if k != "preset")))]

    def constraints(self, step: str) -> dict[str, str]:
        """Each wildcard of the step's patterns matched to exactly its jobs' values (a regex that matches nothing
        where the step has no job), so that two steps writing one pattern never compete for a file."""
        names = {name for pattern in STEPS[step].outputs.values() for name in _wildcards(pattern)} - {"preset"}
        values: dict[str, set[str]] = {name: set() for name in names}
        for job in self.of(step):
            for name, value in job.fields:
                values[name].add(value)
        return {name: "|".join(re.escape(v) for v in sorted(found)) or "(?!)" for name, found in values.items()}


def _wildcards(pattern: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(pattern) if name]


INPUT_FLAGS = {"init_from": "--init-from", "links": "--guided-links"}


class JobBuilder:
    """Builds the jobs of one preset from its plan (nmt.config.plan) and the layout (nmt.base.layout)."""

    def __init__(self, config: dict, root: str | Path):
        self.config, self.root = config, Path(root)
        self.preset = config["preset"]
        self.nmt_args = ("--params", "params.yaml", "--preset", self.preset)
        self.preset_file = f"{config['presets_dir']}/{self.preset}.yaml"
        # the config, each value with the file that set it (DVC's params name a file's own keys)
        self.layers = Layered(
            config, cfg.preset_layers(self._read_yaml("params.yaml"), self.preset, self.root, "params.yaml").origins
        )
        self.ensembles = plan.collect_ensembles(config, root)
        self.samplers = ("--samplers", str(cfg.eflomal_samplers(config)))
        self.jobs: list[Job] = []

    def _read_yaml(self, relative: str) -> dict:
        return cfg.read_yaml(self.root / relative, "the params file" if relative == "params.yaml" else "a preset")

    def path(self, template: str, **fields) -> str:
        return layout.path(template, preset=self.preset, **fields)

    def add(
        self,
        step: str,
        name: str,
        fields: dict,
        commands: list[list[str]],
        inputs: list[str],
        outputs: list[str] | None = None,
        **more,
    ) -> None:
        """A job of `step`; its outputs are the step's patterns filled with `fields` unless given."""
        spec = STEPS[step]
        if outputs is None:
            outputs = [self.path(pattern, **fields) for pattern in spec.outputs.values()]
        self.jobs.append(
            Job(
                spec,
                name,
                tuple(sorted(fields.items())),
                tuple(tuple(map(str, c)) for c in commands),
                tuple(dict.fromkeys(inputs)),
                tuple(outputs),
                self.path(spec.log, **fields),
                **more,
            )
        )

    def sides(self, task: str, split: str) -> tuple[str, str]:
        """The prepared source and target files of a task's split."""
        return tuple(self.path(layout.PREPARED_SIDE, pair=task, split=split, side=side) for side in ("src", "tgt"))

    def models(self, task: str, name: str) -> list[str]:
        """model.pt of a system, of a decoding of one, or of every member of an ensemble."""
        paths, _ = plan.model_files(self.ensembles.get(task, {}), name, self.path(layout.MODELS, pair=task))
        return [p.as_posix() for p in paths]

    def combine(self, task: str, name: str) -> list[str]:
        """--combine for an ensemble of several systems; nothing for a system or a decoding of one."""
        spec = self.ensembles.get(task, {}).get(name)
        return ["--combine", spec["combine"]] if spec and spec["combine"] else []

    def preset_params(self, *sections: str) -> tuple:
        return (*sections, {self.preset_file: list(sections)})

    def preset_keys(self, *keys: str) -> list[str]:
        """Those of `keys` the preset file sets (DVC stops on a params key that a file lacks)."""
        written = {
            origin.key.split(".")[0] for origin in self.layers.origins.values() if origin.params_file == "preset"
        }
        return [key for key in keys if key in written]

    # -- steps ---------------------------------------------------------------------------------------------------
    def data(self, task: str) -> None:
        splits = cfg.task_splits(self.config, task)
        raw, prepared = self.path(layout.RAW, pair=task), self.path(layout.PREPARED, pair=task)
        raw_sides = [
            self.path(layout.RAW_SIDE, pair=task, split=s, side=side) for s in splits for side in ("src", "tgt")
        ]
        self.add(
            "corpus",
            f"corpus.{task}",
            {"pair": task},
            [["nmt", "data", "get", *self.nmt_args, "--task", task, "--out", raw]],
            [],
            [
                *raw_sides,
                *(self.path(layout.GOLD, pair=task, split=s) for s in cfg.gold_splits(self.config, task)),
                *(
                    self.path(layout.RAW_REFERENCE, pair=task, split=s)
                    for s in cfg.raw_reference_splits(self.config, task)
                ),
                self.path(layout.RAW_STATS, pair=task),
            ],
            params=("preset", {self.preset_file: ["data"]}),
            directory=raw,
            settings=cfg.fingerprint(self.config["data"]["tasks"][task]),
        )
        self.add(
            "prepare",
            f"prepare.{task}",
            {"pair": task},
            [
                [
                    "nmt",
                    "data",
                    "prepare",
                    *self.nmt_args,
                    "--task",
                    task,
                    "--raw",
                    raw,
                    "--out",
                    prepared,
                    "--splits",
                    *splits,
                ]
            ],
            raw_sides,
            [
                *(
                    self.path(layout.PREPARED_SIDE, pair=task, split=s, side=side)
                    for s in splits
                    for side in ("src", "tgt")
                ),
                *(self.path(layout.PREPARED_TENSORS, pair=task, split=s) for s in splits),
                *(self.path(layout.VOCAB, pair=task, side=side) for side in ("src", "tgt")),
                self.path(layout.PREP_STATS, pair=task),
            ],
            params=self.preset_params("prepare"),
            reads=(raw,),
            directory=prepared,
            settings=cfg.fingerprint(cfg.prepare_for_task(self.config, task)),
        )
        dictionary = self.path(layout.UNK_DICTIONARY, pair=task)
        if cfg.unk_dictionary_release(self.config, task):  # the task corpus' own (unk.dictionary: stanford)
            self.add(
                "unk_dictionary",
                f"unk_dictionary.{task}",
                {"pair": task},
                [["nmt", "unk", "dict", *self.nmt_args, "--task", task, "--out", dictionary]],
                [],
                params=("preset", "unk", {self.preset_file: self.preset_keys("data", "unk")}),
            )
        else:
            train_src, train_tgt = self.sides(task, "train")
            self.add(
                "unk_dictionary",
                f"unk_dictionary.{task}",
                {"pair": task},
                [["nmt", "unk", "dict", "--src", train_src, "--tgt", train_tgt, "--out", dictionary, *self.samplers]],
                [train_src, train_tgt],
            )

    def align_training_data(self, task: str, aligner: str, settings: dict) -> None:
        """An aligner's links of the prepared training pairs, which guided alignment training reads."""
        src, tgt = self.sides(task, "train")
        fields = {"pair": task, "system": aligner}
        self.add(
            "align_training_data",
            f"align_training_data.{task}.{aligner}",
            fields,
            [
                [
                    "nmt",
                    "align",
                    "eflomal",
                    "--src",
                    src,
                    "--tgt",
                    tgt,
                    "--model",
                    settings["model"],
                    "--method",
                    settings["symmetrize"],
                    "--out",
                    self.path(layout.ALIGNER_LINKS, **fields, split="train"),
                    *self.samplers,
                ]
            ],
            [src, tgt],
        )

    def align_training_model(self, task: str, system: str) -> None:
        """A trained system's links of the training pairs, for another system's guided alignment."""
        src, tgt = self.sides(task, "train")
        fields = {"pair": task, "system": system}
        model = self.path(layout.MODEL, **fields)
        self.add(
            "align_training_model",
            f"align_training_model.{task}.{system}",
            fields,
            [
                [
                    "nmt",
                    "align",
                    "extract",
                    "--model",
                    model,
                    "--src",
                    src,
                    "--tgt",
                    tgt,
                    "--out",
                    self.path(layout.LINKS, **fields, split="train"),
                ]
            ],
            [model, src, tgt],
        )

    def train(self, task: str, system: str, table_path: str) -> None:
        fields = {"pair": task, "system": system}
        table = cfg.load_table(self.root / table_path)
        layered = cfg.system_layers(self.layers, table, system, table_path)
        resolved = layered.values
        inputs = cfg.training_inputs(resolved, self.path(layout.RESULTS, pair=task))
        options = [word for key, p in inputs.items() for word in (INPUT_FLAGS[key], p.as_posix())]
        prepared = self.path(layout.PREPARED, pair=task)
        settings = comparable_settings(resolved)  # keys added later, at their default, change nothing
        settings["prepare"] = cfg.prepare_for_task(resolved, task)
        gate = stopping_gate(resolved)
        if gate:  # the gate the rule stops by is part of what the training does
            settings["gate"] = {name: resolved["verdicts"][name] for name in gate}
        self.add(
            "train",
            f"train.{task}.{system}",
            fields,
            [
                [
                    "nmt",
                    "train",
                    *self.nmt_args,
                    "--table",
                    table_path,
                    "--system",
                    system,
                    "--data",
                    prepared,
                    "--out",
                    self.path(layout.MODEL_DIR, **fields),
                    *options,
                ]
            ],
            [
                *(self.path(layout.PREPARED_TENSORS, pair=task, split=s) for s in ("train", "dev")),
                table_path,
                *(p.as_posix() for p in inputs.values()),
            ],
            keyed_inputs=(table_path,),  # its own system's entry only: another row or system reruns nothing
            params=self.training_params(layered),
            settings=cfg.fingerprint(settings),
            reads=(prepared,),
            persistent=(self.path(layout.CHECKPOINT, **fields),),  # a killed run resumes
            side_outputs=(self.path(layout.METRICS_CSV, **fields),),
        )

    def training_params(self, layered: Layered) -> tuple:
        """The keys of params.yaml, the preset file and the table file that a training's config takes its values
        from, as its resolution recorded them (nmt.config.system_layers: each model and train setting from the layer
        that set it last; a recipe's keys as `recipes.NAME.KEY` of the file that writes them, the system's own as
        `systems.NAME.KEY` of its table file), so a key that a later layer overrides reruns nothing, a recipe's keys
        rerun only that recipe's systems, and a system's only that system (and its seed runs). The keys its seed run
        sets are no file's."""
        values = layered.values
        unread = tuple(f"train.{key}" for key in unread_keys(TrainSettings.from_dict(values["train"])))
        read: dict[str, set[str]] = {"params": set(), self.preset_file: set()}
        keys = [key for section in ("model", "train") for key in leaf_keys(values[section], section)]
        for key in keys + [f"verdicts.{name}" for name in stopping_gate(values)]:
            origin = layered.origins.get(key)
            if not origin or any(key == u or key.startswith(u + ".") for u in unread):
                continue
            if origin.params_file:
                read["params" if origin.params_file == "params" else self.preset_file].add(origin.key)
            elif origin.layer == Layer.TABLE:
                read.setdefault(origin.file, set()).add(origin.key)
        files = [{file: sorted(keys)} for file, keys in read.items() if file != "params" and keys]
        return (*sorted(read["params"]), *files)

    def translate_and_evaluate(self, task: str, system: str, testset: str) -> None:
        """Decoding a system, a table's decoding of one or an ensemble, and scoring it: the models and how they
        are combined and searched are in the command, so a change reruns it."""
        fields = {"pair": task, "system": system, "testset": testset}
        src, ref = self.sides(task, testset)
        hyp, positions = self.path(layout.TRANSLATION, **fields), self.path(layout.POSITIONS, **fields)
        models = self.models(task, system)
        ensembles = self.ensembles.get(task, {})
        decode = [
            word
            for key, value in sorted(plan.decode_options(ensembles, system).items())
            for word in (f"--{key}", str(value))
        ]
        credit = cfg.unk_credit_option(self.config).split()
        self.add(
            "translate",
            f"translate.{task}.{system}.{testset}",
            fields,
            [
                [
                    "nmt",
                    "translate",
                    "--model",
                    *models,
                    *self.combine(task, system),
                    *decode,
                    "--src",
                    src,
                    "--out",
                    hyp,
                    "--positions-out",
                    positions,
                    *credit,
                ]
            ],
            [*models, src],
            params=self.preset_params("translate"),
            settings=cfg.fingerprint([self.config["translate"], ensembles.get(system)]),
        )
        scores = self.path(layout.SCORES, **fields)
        dictionary = self.path(layout.UNK_DICTIONARY, pair=task)
        # perplexity from the system's own model; an ensemble has none (the preset names the language)
        ensemble = plan.is_ensemble(ensembles, system)
        scoring = list(self.nmt_args) if ensemble else ["--model", models[0]]
        raw_ref = (
            [self.path(layout.RAW_REFERENCE, pair=task, split=testset)]
            if testset in cfg.raw_reference_splits(self.config, task)
            else []
        )
        # a lowercased corpus has no case to score: its BLEU and chrF are case-insensitive and say so (case:lc)
        lowercase = ["--lowercase"] if cfg.prepare_for_task(self.config, task)["lowercase"] else []
        self.add(
            "evaluate",
            f"evaluate.{task}.{system}.{testset}",
            fields,
            [
                [
                    "nmt",
                    "evaluate",
                    "--hyp",
                    hyp,
                    "--ref",
                    ref,
                    *(w for r in raw_ref for w in ("--raw-ref", r)),
                    *lowercase,
                    "--src",
                    src,
                    *scoring,
                    "--positions",
                    positions,
                    "--unk-dict",
                    dictionary,
                    "--unk-out",
                    self.path(layout.UNK_TRANSLATION, **fields),
                    "--out",
                    scores,
                    "--system",
                    system,
                    "--testset",
                    testset,
                    "--preset-name",
                    self.preset,
                    "--pair",
                    task,
                ]
            ],
            [hyp, positions, dictionary, ref, *raw_ref, src, *([] if ensemble else models[:1])],
            params=self.preset_params("data") if ensemble else (),
        )

    def attention_map(self, task: str, system: str, split: str, length: list[int], aligner: dict | None) -> None:
        fields = {"pair": task, "system": system, "split": split}
        src, tgt = self.sides(task, split)
        sentence = [
            "--src",
            src,
            "--tgt",
            tgt,
            "--length",
            *map(str, length),
            "--name",
            system,
            "--out",
            self.path(layout.ATTENTION, **fields),
        ]
        if aligner is None:
            models = self.models(task, system)
            self.add(
                "attention_map",
                f"attention_map.{task}.{system}.{split}",
                fields,
                [["nmt", "attention", "--model", *models, *self.combine(task, system), *sentence]],
                [*models, src, tgt],
            )
        else:  # a statistical aligner drawn beside the models: its links of the same sentence pair
            links = self.path(layout.ALIGNER_LINKS, **fields)
            self.add(
                "alignment_map",
                f"alignment_map.{task}.{system}.{split}",
                fields,
                [["nmt", "attention", "--links", links, "--label", aligner_label(aligner), *sentence]],
                [links, src, tgt],
            )

    def alignment(self, entry: dict) -> None:
        """One row of an alignment table: a model's links (both directions merged when the table says so) or a
        statistical aligner's, scored against the gold links."""
        task, name, split = entry["task"], entry["name"], entry["split"]
        fields = {"pair": task, "system": name, "split": split}
        src, tgt = self.sides(task, split)
        gold = self.path(layout.GOLD, pair=task, split=split)

        def score(links: str, more: list[str]) -> list[str]:
            return [
                "nmt",
                "align",
                "score",
                "--gold",
                gold,
                "--test",
                links,
                *more,
                "--src",
                src,
                "--tgt",
                tgt,
                "--system",
                name,
                "--testset",
                split,
                "--pair",
                task,
                "--preset-name",
                self.preset,
                "--out",
                self.path(layout.SCORES, pair=task, system=name, testset=split),
            ]

        if entry["kind"] == "aligner":  # one run per seed of the preset (plan.aligner_runs), each its own sampler's
            links = self.path(layout.ALIGNER_LINKS, **fields)
            train_src, train_tgt = self.sides(task, "train")
            seed = [] if entry["seed"] == eflomal_runner.DEFAULT_SEED else ["--seed", entry["seed"]]
            self.add(
                "align_statistical",
                f"align_statistical.{task}.{name}.{split}",
                fields,
                [
                    [
                        "nmt",
                        "align",
                        "eflomal",
                        "--src",
                        src,
                        "--tgt",
                        tgt,
                        "--extra-src",
                        train_src,
                        "--extra-tgt",
                        train_tgt,
                        "--model",
                        entry["aligner"]["model"],
                        "--method",
                        entry["aligner"]["symmetrize"],
                        *seed,
                        "--out",
                        links,
                        *self.samplers,
                    ]
                ],
                [src, tgt, train_src, train_tgt],
            )
            self.add(
                "align_score", f"align_score.{task}.{name}.{split}", fields, [score(links, [])], [gold, links, src, tgt]
            )
            return
        for t in [task] + ([entry["reverse_task"]] if entry["reverse_task"] else []):
            f = {**fields, "pair": t}
            s_src, s_tgt = self.sides(t, split)
            models = self.models(t, name)
            self.add(
                "align_model",
                f"align_model.{t}.{name}.{split}",
                f,
                [
                    [
                        "nmt",
                        "align",
                        "extract",
                        "--model",
                        *models,
                        *self.combine(t, name),
                        "--src",
                        s_src,
                        "--tgt",
                        s_tgt,
                        "--out",
                        self.path(layout.LINKS, **f),
                        "--soft-out",
                        self.path(layout.SOFT_LINKS, **f),
                        "--predicted-out",
                        self.path(layout.PREDICTED_LINKS, **f),
                    ]
                ],
                [*models, s_src, s_tgt],
            )
        links, predicted = self.path(layout.LINKS, **fields), self.path(layout.PREDICTED_LINKS, **fields)
        if entry["reverse_task"]:
            back = {**fields, "pair": entry["reverse_task"]}
            back_links, back_predicted = self.path(layout.LINKS, **back), self.path(layout.PREDICTED_LINKS, **back)
            merged = self.path(layout.MERGED_LINKS, **fields)
            merged_predicted = self.path(layout.MERGED_PREDICTED_LINKS, **fields)
            merge = ["--flip-reverse", "--method", entry["symmetrize"]]
            self.add(
                "align_merge",
                f"align_merge.{task}.{name}.{split}",
                fields,
                [
                    [
                        "nmt",
                        "align",
                        "symmetrize",
                        "--forward",
                        links,
                        "--reverse",
                        back_links,
                        *merge,
                        "--out",
                        merged,
                    ],
                    [
                        "nmt",
                        "align",
                        "symmetrize",
                        "--forward",
                        predicted,
                        "--reverse",
                        back_predicted,
                        *merge,
                        "--out",
                        merged_predicted,
                    ],
                ],
                [links, back_links, predicted, back_predicted],
            )
            links, predicted = merged, merged_predicted
        soft = self.path(layout.SOFT_LINKS, **fields)
        self.add(
            "align_score",
            f"align_score.{task}.{name}.{split}",
            fields,
            [score(links, ["--test-predicted", predicted, "--soft", soft])],
            [gold, links, predicted, soft, src, tgt],
        )

    def benchmarks(self) -> None:
        for name in ("attention", "monotonic"):
            self.add(
                f"bench_{name}",
                f"bench_{name}",
                {},
                [
                    [
                        "nmt",
                        "bench",
                        name,
                        *self.nmt_args,
                        "--threads",
                        "1",
                        "--out",
                        self.path(layout.BENCHMARK, name=name),
                    ]
                ],
                [],
                params=("bench",),
                settings=cfg.fingerprint(self.config["bench"][name]),
            )

    def report(self) -> None:
        """The report reads every other job's files (the corpora's and their preparation's as directories) and
        the whole configuration: the verdicts' settings, the preset's description and its deviations from the paper
        preset, computed from every key of both. Its metrics: each translation's headline numbers and the verdict
        counts (nmt.records.headline); its plots: the tables' learning curves."""
        outputs = [out for job in self.jobs for out in job.outputs]
        params = Params.read(self.config)
        report = self.path(layout.REPORT)
        headlines = [
            self.path(layout.REPORT_HEADLINE, **dict(job.fields)) for job in self.jobs if job.step.name == "evaluate"
        ]
        curves = [
            self.path(layout.REPORT_LEARNING_CURVES, table=table)
            for table in plan.learning_curve_tables(self.config, self.root)
        ]
        self.add(
            "report",
            "report",
            {},
            [
                [
                    "nmt",
                    "report",
                    *self.nmt_args,
                    "--results",
                    self.path(layout.RESULTS_ROOT),
                    "--data",
                    self.path(layout.DATA_ROOT),
                    "--out",
                    report,
                ]
            ],
            [
                *outputs,
                *self.config["tables"],
                *params.figures,
                *params.claims,
                "params.yaml",
                self.preset_file,
                f"{self.config['presets_dir']}/paper.yaml",
            ],
            reads=tuple(job.directory for job in self.jobs if job.directory),
            directory=report,
            metrics=(*headlines, self.path(layout.REPORT_VERDICTS)),
            plots=tuple(curves),
        )


def build_jobs(config: dict, root: str | Path = ".") -> Jobs:
    """Every job of the preset (``config``: params.yaml merged with its preset, nmt.config.merge_preset), in the
    order its steps run: data, the aligners' training links, trainings, decoding and scoring, figures'
    attention maps, alignment tables, benchmarks, report. A table, figure or claim naming what the plan lacks is
    a ConfigError naming its file."""
    builder = JobBuilder(config, root)
    systems = plan.collect_systems(config, root)
    plan.collect_claims(config, root)  # a claim naming an unknown system stops here, not at the report
    for task in systems:
        builder.data(task)
    for (task, aligner), settings in plan.collect_training_alignments(config, root).items():
        builder.align_training_data(task, aligner, settings)
    for task, system in sorted(plan.collect_training_model_alignments(config, root)):
        builder.align_training_model(task, system)
    for task, by_system in systems.items():
        for system, table_path in by_system.items():
            builder.train(task, system, table_path)
    for task, system, testset in plan.collect_evaluations(config, root):
        builder.translate_and_evaluate(task, system, testset)
    aligners = plan.statistical_aligners(config, root)
    for (task, system, split), length in plan.collect_attention_maps(config, root).items():
        builder.attention_map(task, system, split, length, aligners.get((task, system, split)))
    for entry in plan.collect_alignments(config, root):
        builder.alignment(entry)
    builder.benchmarks()
    builder.report()
    return Jobs(prioritised(builder.jobs, config, root))
