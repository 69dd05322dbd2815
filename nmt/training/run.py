"""`nmt train`: one system = one table row, trained with the paper's recipe, resumable at any point.
Details: docs/internals/training.md."""

from __future__ import annotations

import errno
import math
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

from ..base.atomic import write_atomic
from ..base.devices import pick_device, set_threads
from ..base.directory_lock import DirectoryLock
from ..base.environment import describe
from ..base.errors import UserError
from ..config import ConfigError
from ..data.batches import epoch_batches, make_batch
from ..data.links import load_training_links
from ..data.prepare import load_split, prepared_fingerprint
from ..data.text import read_lines
from ..data.vocab import Vocab
from ..decode.translate import ensure_can_translate, translate_ids
from ..engine import cpu_precision, mkl_on_amd
from ..engine.train_step import TrainingStep
from ..models.io import (
    load_checkpoint,
    plain,
    read_init_from,
    read_model_file,
    restore_rng_states,
    rng_states,
    save_checkpoint,
    save_model,
)
from ..models.registry import build_model, credit_rule
from ..models.shared import count_parameters
from ..records import metrics, model_info
from ..records.metrics import DIGEST_KEY, metrics_digest, write_evaluations, write_metrics
from ..records.model_info import write_model_info
from ..scoring.bleu import bleu_tokenized
from ..scoring.likelihood import corpus_nll, perplexity
from ..settings import SystemSettings, TrainSettings, comparable_settings, upgrade
from ..settings.schedule import Schedule, learning_rate, wants_epoch
from .curves import CURVES_DIR, Curves, hparams_of
from .progress import Pace, rate, stamp

CHECKPOINT = "checkpoint.pt"
FINAL = "model.pt"
BEST = "best.pt"
#: what a training writes beside its checkpoint (and CURVES_DIR): an earlier training's are removed when one starts
#: afresh, so that nothing of two trainings is ever mixed in one directory
RUN_FILES = (FINAL, BEST, model_info.NAME, metrics.NAME, metrics.CSV_NAME, metrics.EVALUATIONS_NAME)


class TrainingStopped(UserError):
    """A training could not write its files (a full disk, a quota, a directory gone read-only): one line that says
    which file, why, and that the last checkpoint is intact to resume from."""


class AnotherTraining(UserError):
    """The output directory holds another training's finished model (nmt train --replace drops it)."""


class Diverged(UserError):
    """The dev perplexity is not a finite number: the training stops before recording it."""


class OtherData(UserError):
    """The checkpoint to resume was trained on other prepared data (nmt train --replace starts afresh)."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def attention_parameter_names(model: torch.nn.Module) -> list[str]:
    """The parameters of the model's attention layer (`train.trainable: attention`): those of `model.attention`."""
    return [name for name, _ in model.named_parameters() if name.startswith("attention.")]


def trainable_parameters(model: torch.nn.Module, which: str) -> list[torch.nn.Parameter]:
    """The parameters the optimiser updates; with `attention` every other parameter is frozen (no gradient)."""
    if which == "all":
        return list(model.parameters())
    if which != "attention":
        raise ConfigError(f"train.trainable: unknown value {which!r} (all or attention)")
    names = set(attention_parameter_names(model))
    if not names:
        raise ConfigError("train.trainable: attention, but the model has no attention layer")
    for name, param in model.named_parameters():
        param.requires_grad_(name in names)
    return [param for name, param in model.named_parameters() if name in names]


def initialise_from(
    model: torch.nn.Module, path: str | Path, model_cfg: dict, src_vocab: Vocab, tgt_vocab: Vocab
) -> tuple[list[str], list[str]]:
    """Copy the parameters of a trained model (model.pt or checkpoint.pt) into `model`: every one with the same name
    (and then necessarily the same shape). Returns (copied names, names left as initialised)."""
    path = Path(path)
    blob = read_init_from(path)  # ConfigError when missing, unreadable or not nmt's
    theirs_cfg = blob["model_config"]
    mine, theirs = model_cfg["arch"], upgrade("model", theirs_cfg)["arch"]
    if mine != theirs:
        raise ConfigError(f"train.init_from: {path} is a {theirs} model; this system is {mine}")
    for side, vocab, key in (("source", src_vocab, "src_vocab"), ("target", tgt_vocab, "tgt_vocab")):
        if blob[key] is not None and list(blob[key]) != list(vocab.itos):
            raise ConfigError(
                f"train.init_from: {path}: its {side} vocabulary differs from the training data's "
                f"({len(blob[key])} vs {len(vocab)} words)"
            )
    own, state = model.state_dict(), blob["model"]
    copied = [name for name in own if name in state]
    for name in copied:
        if state[name].shape != own[name].shape:
            raise ConfigError(
                f"train.init_from: {path}: parameter {name} has shape {tuple(state[name].shape)}, "
                f"this model's {tuple(own[name].shape)}"
            )
    if not copied:
        raise ConfigError(f"train.init_from: {path}: no parameter of it belongs to this model")
    model.load_state_dict({**own, **{name: state[name] for name in copied}})
    return copied, [name for name in own if name not in state]


def alignment_credit(model: torch.nn.Module) -> str:
    """Which step's attention weights guided alignment trains for a target word (as alignment extraction credits
    them, nmt.models.registry.credit_rule). A model without attention cannot be trained with guided alignment."""
    if getattr(model, "attention", None) is None:
        raise ConfigError("train.guided_alignment needs a model with attention (this one has attention: none)")
    return credit_rule(model.settings)


class StopRequested:
    """Turns SIGTERM/SIGUSR1 (SLURM pre-emption and time-limit warnings) and SIGINT (Ctrl-C) into a flag checked
    after each update."""

    def __init__(self):
        self.signum: int | None = None
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame):
        self.signum = signum

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def train(
    config: dict,
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    system: str = "system",
    threads: int | None = None,
    device: str | None = None,
    progress: bool | None = None,
    replace: bool = False,
) -> list[dict]:
    """Train one system; returns the per-epoch metrics. `config` is a resolved system config. `replace`: train
    even where `out_dir` holds another training's finished model (whose files are then removed); without it that is
    an AnotherTraining error, before anything is written."""
    started = time.perf_counter()  # wall_s counts from here: setup (data, model) included
    set_threads(threads)
    run = TrainingRun(
        config,
        Path(data_dir),
        Path(out_dir),
        system=system,
        device=pick_device(device),
        progress=progress,
        started=started,
        replace=replace,
    )
    try:
        with StopRequested() as stop:
            run.start()  # model info is written once the signals are caught: from then on a signal ends in a checkpoint
            while wants_epoch(run.state["epoch"], run.schedule, run.state["metrics"]):
                if run.limit_reached() and run.state["batch"] == 0:
                    log(f"[{system}] {run.state['updates']} updates: train.max_updates reached")
                    break
                run.epoch(stop)
        run.finish()
    except OSError as err:  # a full disk, a quota: every file is written atomically, so the last checkpoint is whole
        raise TrainingStopped(f"{write_error(err)}: the training stopped; {run.resume_note(err)}") from None
    finally:  # however it ends (a signal's checkpoint included), the directory is free again
        run.close()
    return run.state["metrics"]


def write_error(err: OSError) -> str:
    """An OSError as `PATH: reason` (the path as text)."""
    reason = err.strerror or str(err) or type(err).__name__
    return f"{os.fsdecode(err.filename)}: {reason}" if err.filename is not None else reason


class TrainingRun:
    """One system's training in the steps `train` takes: set up (data, model, precision, a checkpoint to resume
    from), start (its model info), one epoch after another, finish (model.pt). `state` is what a checkpoint keeps."""

    def __init__(
        self,
        config: dict,
        data_dir: Path,
        out_dir: Path,
        *,
        system: str,
        device: torch.device,
        progress: bool | None,
        started: float | None = None,
        replace: bool = False,
    ):
        self.config = plain(config, "config")  # as checkpoint.pt keeps it: a resumed run compares like with like
        # wall time: this process's from `started` (time.perf_counter) on, plus what the checkpoint says earlier
        # processes spent (_resume); recorded in every checkpoint's state and in the model info's wall_s
        self.started = time.perf_counter() if started is None else started
        self.wall_before, self.processes_before = 0.0, 0
        self.out_dir, self.system, self.dev, self.progress = out_dir, system, device, progress
        self.data_dir = data_dir
        self.settings = SystemSettings.from_config(self.config)  # typed, every key there: read once
        self.model_cfg, train = self.config["model"], self.settings.train
        self.seed = train.seed
        self.schedule = self.settings.schedule
        self.max_updates = train.max_updates
        self.keep, self.eval_every = train.keep, train.eval_every
        self.best_by = train.best_by if self.keep == "best" else None
        self.checkpoint_every = train.checkpoint_every

        self.src_vocab, self.tgt_vocab = Vocab.load(data_dir / "vocab.src"), Vocab.load(data_dir / "vocab.tgt")
        self.train_src, self.train_tgt = load_split(data_dir / "train.pt")
        self.dev_src, self.dev_tgt = load_split(data_dir / "dev.pt")
        # best_by: dev_bleu scores a greedy decode of the dev set against its tokenised text
        self.dev_refs = dev_references(data_dir, self.dev_tgt, self.tgt_vocab) if self.best_by == "dev_bleu" else None
        self.guided_weight, self.train_links = guided_links(train, data_dir, self.train_src, self.train_tgt)
        # what identifies the data trained on: kept in every checkpoint and in the model info, checked on resume
        self.data = {"dir": str(data_dir), "fingerprint": prepared_fingerprint(data_dir)}
        # the data read, the directory is ours until the training ends: a second training aimed at it stops here
        self.lock = DirectoryLock(out_dir, "training")
        try:
            # another training's finished model here: refused before anything is touched, unless replacing it
            other = other_training(out_dir, self.config, system)
            if other is not None and not replace:
                raise AnotherTraining(
                    f"{out_dir}: {other}; train into another --out, or give --replace to remove "
                    f"its files and train {system} here"
                )
            torch.manual_seed(self.seed)
            self.model = model = build_model(self.settings.model, len(self.src_vocab), len(self.tgt_vocab))
            model.init_uniform(train.init_range)
            if self.dev_refs is not None:
                ensure_can_translate(model)  # a target-foresight model has no translation to score
            credit = alignment_credit(model) if self.train_links is not None else None

            # Plain data only (save_checkpoint checks): "rng" (and "cuda_rng" on a GPU) are the generators'
            # ByteTensors.
            self.state = {
                "epoch": 1,
                "batch": 0,
                "updates": 0,
                "metrics": [],
                "loss_sum": 0.0,
                "tokens": 0,
                "elapsed": 0.0,
                "rng": None,
                "evaluations": [],
                "best": None,
                "data": self.data,
            }
            self.ckpt_path = out_dir / CHECKPOINT
            self.saved: tuple[int, int, int] | None = None  # (epoch, batch, updates) of the last checkpoint written
            ckpt = resumable_checkpoint(self.ckpt_path, self.config, system, self.data, replace=replace)
            if ckpt is None:  # starting afresh: nothing of an earlier training stays beside this one's files
                clear_earlier_training(out_dir, system, keep_model=other is None)
            elif other is not None:  # replacing, and the checkpoint is this training's: model.pt is not
                (out_dir / FINAL).unlink()
                log(f"[{system}] removed {out_dir / FINAL}: {other}")
            if ckpt is None and train.init_from:
                copied, fresh = initialise_from(model, train.init_from, self.model_cfg, self.src_vocab, self.tgt_vocab)
                log(
                    f"[{system}] {len(copied)} parameters from {train.init_from}; newly initialised: "
                    f"{', '.join(fresh) or 'none'}"
                )
            model.to(device)
            self.params = trainable_parameters(model, train.trainable)
            precision, self.precision_why = self._precision(ckpt)
            self.state["precision"] = precision
            self.update = TrainingStep(
                model, self.params, train, device, guided_weight=self.guided_weight, credit=credit, precision=precision
            )
            self.optimizer = self.update.optimizer
            if ckpt is not None:
                self._resume(ckpt, precision)
        except BaseException:  # a run that never started holds nothing (a caller in this process may try again)
            self.lock.release()
            raise

    def _precision(self, ckpt: dict | None) -> tuple[str, str | None]:
        """train.precision with `auto` decided for a CPU (nmt.engine.cpu_precision: measured for this model on this
        machine), and why; a resumed run goes on as it began (a checkpoint without a precision is from before `auto`
        could mean bf16 on a CPU: TrainingStep's own reading of the setting)."""
        if ckpt is not None:
            return ckpt["state"].get("precision", self.settings.train.precision), None
        mean_length = max(1, round(sum(map(len, self.train_tgt)) / max(len(self.train_tgt), 1)))
        return cpu_precision.resolve(
            self.model_cfg, self.settings.train, len(self.src_vocab), len(self.tgt_vocab), mean_length, self.dev
        )

    def _resume(self, ckpt: dict, precision: str) -> None:
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        # (a checkpoint written before train.keep, or before its precision was recorded)
        self.state = {"evaluations": [], "best": None, "precision": precision, **ckpt["state"], "data": self.data}
        # (a checkpoint written before wall_s was recorded: its processes' time is unknown, counted as 0)
        self.wall_before = float(self.state.get("wall_s", 0.0))
        self.processes_before = int(self.state.get("processes", 1))
        self.saved = (self.state["epoch"], self.state["batch"], self.state["updates"])
        log(
            f"[{self.system}] resuming from {self.ckpt_path}: epoch {self.state['epoch']}, batch "
            f"{self.state['batch']}, {self.state['updates']} updates done"
        )
        # Snakemake deletes a failed job's outputs before it reruns it, and a job killed after its last epoch's
        # checkpoint has no epoch left to write them again: restore the finished epochs' records now.
        if self.state["metrics"]:
            write_metrics(self.out_dir, self.state["metrics"])

    def start(self) -> None:
        """The model info (what is trained, how, on what), the log line that says it, and the live curves."""
        self.curves = Curves(self.out_dir, self.system, resume_from=self.state["updates"], log=log)
        self.curves.session(hparams_of(self.system, self.config))
        self.pace = Pace(self.schedule, self.max_updates)
        self.meta = {
            "system": self.system,
            "config": self.config,
            "parameters": count_parameters(self.model),
            "trainable_parameters": sum(p.numel() for p in self.params),
            "src_vocab": len(self.src_vocab),
            "tgt_vocab": len(self.tgt_vocab),
            "epochs": self.schedule.epochs,
            "halve_after": self.schedule.halve_after,
            "plateau": self.schedule.plateau,
            "gate": self.schedule.gate,  # the convergence gate a plateau with stop: gate stopped by
            "train_sentences": len(self.train_src),
            "data": self.data,
            "device": str(self.dev),
            "precision": "fp32" if self.update.dtype is None else "bf16",
            "environment": describe(self.dev),
        }  # where this process trains (nmt.base.environment)
        self._write_meta()
        log(
            f"[{self.system}] {start_line(self.meta, self.schedule, self.update)}"
            + (f" ({self.precision_why})" if self.precision_why else "")
        )

    def close(self) -> None:
        """The event files flushed and the output directory's lock released."""
        curves = getattr(self, "curves", None)  # none before start()
        if curves is not None:
            curves.close()
        self.lock.release()

    def _write_meta(self) -> None:
        write_model_info(self.out_dir, self.meta)

    def wall_s(self) -> float:
        """The training's wall time so far: every earlier process's (as the checkpoint recorded it) and this one's."""
        return self.wall_before + (time.perf_counter() - self.started)

    def limit_reached(self) -> bool:
        return bool(self.max_updates) and self.state["updates"] >= self.max_updates

    def checkpoint(self, epoch: int, batch: int) -> None:
        """checkpoint.pt: resume at `batch` of `epoch`, with every generator where it is now."""
        self.state.update(epoch=epoch, batch=batch, **rng_states(self.dev))  # CPU RNG, and a GPU's CUDA RNG too
        self.state.update(wall_s=self.wall_s(), processes=self.processes_before + 1)  # read by nothing trained
        save_checkpoint(self.ckpt_path, self.config, self.model, self.optimizer, self.state)
        self.saved = (epoch, batch, self.state["updates"])

    def resume_note(self, err: OSError) -> str:
        """What a training stopped by `err` (a file it could not write) leaves to resume from, and what to do (for
        its one-line error)."""
        fix = "make room" if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) else "fix that"
        if self.saved is None:
            return f"no checkpoint was written yet: {fix} and run the same command to start again"
        epoch, batch, updates = self.saved
        where = f"epoch {epoch}, batch {batch}" if batch else f"the start of epoch {epoch}"
        return (
            f"the last checkpoint, {self.ckpt_path} ({where}, {updates} updates), is intact: {fix} and run the "
            "same command to resume from it"
        )

    def dev_perplexity(self) -> tuple[float, int]:
        """The dev set's summed NLL and its target tokens (in evaluation mode; training mode is the caller's)."""
        return corpus_nll(self.model, self.dev_src, self.dev_tgt, self.settings.train.batch_size, self.dev)

    def dev_bleu(self) -> float:
        """Tokenised BLEU of a greedy decode of the dev set (train.best_by: dev_bleu), in evaluation mode (training
        mode is the caller's); decoding draws no random numbers, so the training's generators are untouched."""
        self.model.eval()
        hyps = translate_ids(
            self.model,
            self.dev_src,
            beam=1,
            batch_size=self.settings.train.batch_size,
            max_len_ratio=2.0,
            device=self.dev,
            progress=False,
        )
        return bleu_tokenized([" ".join(self.tgt_vocab.decode(h.tokens)) for h in hyps], self.dev_refs)[0]

    def evaluated(self, epoch: int, dev_ppl: float) -> dict:
        """An evaluation: the dev perplexity (and with best_by: dev_bleu the dev BLEU) recorded; with keep: best, the
        best so far by best_by kept as best.pt. Returns the evaluation's record."""
        state = self.state
        if not math.isfinite(dev_ppl):  # a diverged training: its records would hold a number nothing can read
            raise Diverged(
                f"[{self.system}] the training diverged: dev perplexity {dev_ppl} after {state['updates']} "
                f"updates (epoch {epoch}); nothing of this evaluation is recorded, the last checkpoint "
                f"is intact: lower train.lr or train.clip_norm and train again (--replace)"
            )
        entry = {"epoch": epoch, "updates": state["updates"], "dev_ppl": dev_ppl}
        if self.dev_refs is not None:
            entry["dev_bleu"] = self.dev_bleu()
        state["evaluations"].append(entry)
        self.curves.evaluation(
            state["updates"],
            dev_ppl,
            entry.get("dev_bleu"),
            best_dev_ppl=min(e["dev_ppl"] for e in state["evaluations"]),
        )
        if self.eval_every:
            write_evaluations(self.out_dir, state["evaluations"])
        if self.keep == "best" and better(entry, state["best"], self.best_by):
            save_model(
                self.out_dir / BEST,
                self.model,
                self.src_vocab,
                self.tgt_vocab,
                self.config,
                system=self.system,
                model_config=self.model_cfg,
            )
            state["best"] = entry
        return entry

    def _begin_epoch(self, epoch: int) -> float:
        """The epoch's learning rate set, and its generators seeded (or, mid-epoch, restored from the checkpoint)."""
        state = self.state
        lr = learning_rate(self.settings.train.lr, epoch, self.schedule, state["metrics"])
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        if state["batch"] == 0:
            torch.manual_seed(self.seed * 1000 + epoch)
            state.update(loss_sum=0.0, tokens=0, elapsed=0.0)
            if self.train_links is not None:
                state.update(align_sum=0.0, sentences=0)
        else:
            inexact = restore_rng_states(state, self.dev)  # resuming mid-epoch: where the generators were
            if inexact:
                log(f"[{self.system}] {self.ckpt_path}: {inexact}")
        return lr

    def epoch(self, stop: StopRequested) -> None:
        """Train the epoch `state` is at (from its batch on), then record and log it and write a checkpoint."""
        state, system, epoch = self.state, self.system, self.state["epoch"]
        batches = epoch_batches(
            self.train_src,
            self.train_tgt,
            self.settings.train.batch_size,
            self.settings.train.batch_tokens,
            self.seed,
            epoch,
        )
        lr = self._begin_epoch(epoch)
        self.model.train()
        started = time.perf_counter() - state["elapsed"]
        scheduled = f"{'at most ' if self.schedule.plateau else ''}{self.schedule.epochs}"
        bar = tqdm(
            total=len(batches),
            initial=state["batch"],
            desc=f"{system} epoch {epoch}/{scheduled}",
            unit="batch",
            disable=None if self.progress is None else not self.progress,
            leave=False,
        )
        # The sums stay on the device (float64, as the Python floats of the checkpoint) and are read when a
        # checkpoint or the epoch's record needs them: no update waits for the device.
        sums = Sums(state, self.dev, guided=self.train_links is not None)
        lines = bar.disable  # no bar drawn (a job's log): a progress line every nmt.training.progress.EVERY_S instead
        done = state["batch"]  # the epoch's updates so far
        for position in range(state["batch"], len(batches)):
            if self.limit_reached():
                break
            self._train_batch(batches[position], sums)
            done = position + 1
            bar.update(1)
            if self.curves.wants_running(state["updates"]):
                sums.read()
                self.curves.running(state["updates"], state["loss_sum"], state["tokens"])
            state["elapsed"] = time.perf_counter() - started
            if lines and done < len(batches) and not self.limit_reached() and self.pace.due():
                sums.read()
                log(self.progress_line(epoch, done, len(batches), state["elapsed"]))
            if stop.signum is not None:
                sums.read()
                self.checkpoint(epoch, position + 1)
                bar.close()
                log(f"[{system}] signal {stop.signum}: checkpoint written to {self.ckpt_path}; rerun to resume")
                raise SystemExit(128 + stop.signum)
            if self.checkpoint_every and state["updates"] % self.checkpoint_every == 0:
                sums.read()
                self.checkpoint(epoch, position + 1)
            if self.eval_every and state["updates"] % self.eval_every == 0 and position + 1 < len(batches):
                self.evaluated(epoch, perplexity(*self.dev_perplexity()))
                log(f"[{system}] {state['updates']} updates: dev ppl {state['evaluations'][-1]['dev_ppl']:.2f}")
                self.model.train()
        sums.read()
        bar.close()
        ended = (
            time.perf_counter()
        )  # the epoch's end (evaluation, records, checkpoint) timed from here: nmt.training.progress
        elapsed = ended - started
        dev_nll, dev_tokens = self.dev_perplexity()
        record = epoch_record(epoch, lr, state, dev_nll, dev_tokens, elapsed, guided=self.train_links is not None)
        state["metrics"].append(record)
        evaluation = self.evaluated(epoch, record["dev_ppl"])
        if "dev_bleu" in evaluation:
            record["dev_bleu"] = evaluation["dev_bleu"]
        self.curves.epoch(state["updates"], record)
        write_metrics(self.out_dir, state["metrics"])
        self.pace.ended_epoch(time.perf_counter() - ended)
        last = self.limit_reached() or not wants_epoch(epoch + 1, self.schedule, state["metrics"])
        log(
            f"{stamp()} [{system}] epoch {epoch}: lr {lr:g}, "
            f"train ppl {record['train_ppl']:.2f}, dev ppl {record['dev_ppl']:.2f}, {rate(done, elapsed)}, "
            f"{record['tgt_tokens_per_s']:.0f} tgt tok/s; "
            + (
                "left: none, the last epoch"
                if last
                else self.pace.left(epoch, done, len(batches), elapsed, state["updates"])
            )
        )
        self.checkpoint(epoch + 1, 0)
        self.pace.ended_epoch(time.perf_counter() - ended)  # with the checkpoint, for the next epoch's lines

    def progress_line(self, epoch: int, done: int, batches: int, elapsed: float) -> str:
        """A line within an epoch (nmt.training.progress): its updates so far, running train perplexity, speed, time left."""
        state = self.state
        return (
            f"{stamp()} [{self.system}] epoch {epoch} at {done:,}/{batches:,} updates: "
            f"train ppl {perplexity(state['loss_sum'], state['tokens']):.2f}, {rate(done, elapsed)}; "
            f"{self.pace.left(epoch, done, batches, elapsed, state['updates'])}"
        )

    def _train_batch(self, index: list[int], sums: Sums) -> None:
        """One update on the training pairs `index`, added to the epoch's sums and counts."""
        state, links = self.state, self.train_links
        pairs = [links[i] for i in index] if links is not None else None
        batch = to_device(
            make_batch([self.train_src[i] for i in index], [self.train_tgt[i] for i in index], index, pairs), self.dev
        )
        loss, align = self.update(batch)
        sums.add(loss, align)
        state["updates"] += 1
        state["tokens"] += sum(len(self.train_tgt[i]) + 1 for i in index)  # target words and </s>
        if align is not None:
            state["sentences"] += len(index)

    def finish(self) -> None:
        """model.pt: the last parameters, or with keep: best those of the best evaluation (as best.pt has them)."""
        best, out_dir = self.state["best"], self.out_dir
        if self.keep == "best" and best is not None:
            write_atomic(out_dir / FINAL, lambda handle: handle.write((out_dir / BEST).read_bytes()))
            by_bleu = f", dev BLEU {best['dev_bleu']:.2f}" if "dev_bleu" in best else ""
            log(
                f"[{self.system}] model.pt: the best evaluation by {self.best_by}, epoch {best['epoch']}, "
                f"{best['updates']} updates, dev ppl {best['dev_ppl']:.2f}{by_bleu}"
            )
            self.meta["kept"] = best
        else:
            save_model(
                out_dir / FINAL,
                self.model,
                self.src_vocab,
                self.tgt_vocab,
                self.config,
                system=self.system,
                model_config=self.model_cfg,
            )
        self.meta.update(wall_s=self.wall_s(), processes=self.processes_before + 1)  # model.pt written: the cost
        self.meta[DIGEST_KEY] = metrics_digest(self.state["metrics"])  # what ties the metrics file to this training
        self._write_meta()
        if self.curves.on:
            self.curves.finished(self.state["updates"], self.final_dev_bleu())

    def final_dev_bleu(self) -> float | None:
        """model.pt's dev BLEU, for TensorBoard's HPARAMS tab: a greedy decode as train.best_by: dev_bleu scores it
        (that evaluation's, where it was made); None for a model that cannot translate (target foresight)."""
        try:
            ensure_can_translate(self.model)
        except ConfigError:
            return None
        best = self.state["best"]
        if self.keep == "best" and best is not None:
            if "dev_bleu" in best:
                return best["dev_bleu"]
            self.model.load_state_dict(read_model_file(self.out_dir / FINAL)["model"])  # the kept parameters
        if self.dev_refs is None:
            self.dev_refs = dev_references(self.data_dir, self.dev_tgt, self.tgt_vocab)
        bleu = self.dev_bleu()
        log(f"[{self.system}] model.pt: dev BLEU {bleu:.2f} (greedy decode of the dev set)")
        return bleu


def guided_links(train: TrainSettings, data_dir: Path, train_src: list, train_tgt: list) -> tuple[float, list | None]:
    """The guided-alignment loss weight and, when it is on, the links of every training pair."""
    weight = train.guided_weight
    if weight <= 0:
        return weight, None
    links_path = Path(train.guided_alignment["file"])
    return weight, load_training_links(
        links_path if links_path.is_absolute() else data_dir / links_path, train_src, train_tgt
    )


def better(entry: dict, best: dict | None, best_by: str | None) -> bool:
    """Whether an evaluation beats the best so far: by the lowest dev perplexity, or (best_by: dev_bleu) the highest
    dev BLEU; a tie keeps the earlier one."""
    if best is None:
        return True
    if best_by == "dev_bleu":
        return entry["dev_bleu"] > best["dev_bleu"]
    return entry["dev_ppl"] < best["dev_ppl"]


def dev_references(data_dir: Path, dev_tgt: list[list[int]], vocab: Vocab) -> list[str]:
    """The dev set's tokenised target text (dev.tgt, as `nmt data prepare` writes it beside dev.pt); from the ids
    where it is not there (rare words then read <unk>)."""
    text = data_dir / "dev.tgt"
    if text.is_file():
        refs = read_lines(text)
        if len(refs) == len(dev_tgt):
            return refs
    return [" ".join(vocab.decode(ids)) for ids in dev_tgt]


def settings_difference(theirs: dict, mine: dict, limit: int = 3) -> str:
    """The model and train settings in which two configs differ, as `key: theirs, here mine` (the first `limit`)."""

    def flat(config: dict) -> dict:
        out = {}
        for section, values in comparable_settings(config).items():
            for key, value in values.items():
                out[f"{section}.{key}"] = value
        return out

    def shown(values: dict, key: str) -> str:
        return repr(values[key]) if key in values else "unset"

    a, b = flat(theirs), flat(mine)
    keys = sorted(k for k in set(a) | set(b) if k not in a or k not in b or a[k] != b[k])
    listed = [f"{k} {shown(a, k)}, here {shown(b, k)}" for k in keys[:limit]]
    return "; ".join(listed) + (f"; and {len(keys) - limit} more" if len(keys) > limit else "")


def other_training(out_dir: Path, config: dict, system: str) -> str | None:
    """Why `out_dir`'s model.pt is another training's finished model (its system or its settings differ from this
    one's, or it cannot be read), or None when there is none or it is this training's own."""
    path = out_dir / FINAL
    if not path.exists():
        return None
    try:  # the tensors mapped, not read: only its system and settings are looked at
        blob = read_model_file(path, mmap=True, remedy="it cannot be told whose it is")
    except ConfigError as err:
        return f"its model.pt is not a model this training can keep ({str(err).removeprefix(f'{path}: ')})"
    theirs = blob.get("system")
    try:
        difference = settings_difference(blob["config"], config)
    except (AttributeError, TypeError):  # its model or train section is no mapping
        return f"its model.pt ({theirs!r}) holds no model and train settings to compare with this training's"
    if theirs == system and not difference:
        return None
    named = f"system {theirs!r}" if theirs != system else f"an earlier training of {system}"
    settings = f"trained with other settings ({difference})" if difference else "with the same settings"
    return f"holds the finished model of {named} ({path.name}), {settings}"


def clear_earlier_training(out_dir: Path, system: str, *, keep_model: bool) -> None:
    """Remove what an earlier training left beside the checkpoint of one starting afresh (its metrics, evaluations,
    best.pt, curves; model.pt too unless `keep_model`: it is this training's own, to be written again), so that a
    training killed early never leaves its model info beside another's files."""
    removed = []
    for name in RUN_FILES:
        path = out_dir / name
        if path.is_file() and not (name == FINAL and keep_model):
            path.unlink()
            removed.append(name)
    curves = out_dir / CURVES_DIR
    if curves.is_dir():
        shutil.rmtree(curves)
        removed.append(CURVES_DIR + "/")
    if removed:
        log(f"[{system}] starting afresh: removed the earlier training's {', '.join(removed)} from {out_dir}")


def resumable_checkpoint(
    ckpt_path: Path, config: dict, system: str, data: dict, *, replace: bool = False
) -> dict | None:
    """The checkpoint to resume from: None when there is none, or when it was written with other settings (then
    it is moved aside to checkpoint.pt.stale and training starts afresh). One trained on other prepared data
    (another fingerprint: another corpus, direction or vocabulary; a one-word slip of --data) is refused
    (OtherData), or with `replace` moved aside too: resumed, it would be one model trained on two corpora."""
    if not ckpt_path.exists():
        return None
    # onto the CPU: load_state_dict copies the tensors to the model's and optimiser's device, and the RNG
    # states must stay CPU ByteTensors
    ckpt = load_checkpoint(ckpt_path, resume=True)
    theirs = ckpt["state"].get("data")  # None: written before the data was recorded, which cannot be checked
    other_data = theirs is not None and theirs.get("fingerprint") != data["fingerprint"]
    if other_data and not replace:
        raise OtherData(
            f"{ckpt_path}: trained on the data in {theirs.get('dir')} (fingerprint "
            f"{theirs.get('fingerprint')}), not on {data['dir']} ({data['fingerprint']}); resuming would "
            f"train one model on both: give the --data it was trained on, or --replace to train {system} "
            f"afresh here"
        )
    if not other_data and comparable_settings(ckpt["config"]) == comparable_settings(config):
        return ckpt
    stale = ckpt_path.with_name(CHECKPOINT + ".stale")
    ckpt_path.replace(stale)
    why = "trained on other data" if other_data else "written with different settings"
    log(f"[{system}] {ckpt_path} was {why}: moved to {stale}, starting afresh")
    return None


def start_line(meta: dict, schedule: Schedule, update) -> str:
    """The log line a training starts with: the model's size, the schedule and how it computes."""
    return (
        f"{meta['parameters']:,} parameters ({meta['trainable_parameters']:,} trained), "
        f"{meta['train_sentences']:,} training pairs, {schedule.describe()}, device {meta['device']}, "
        f"{torch.get_num_threads()} threads, engine {update.engine}, {'fp32' if update.dtype is None else 'bf16'}"
        f"{', CUDA graphs' if update.graphs is not None else ''}"
        f"{', MKL as on Intel (nmt.engine.mkl_on_amd)' if mkl_on_amd.active() else ''}"
    )


def epoch_record(
    epoch: int, lr: float, state: dict, dev_nll: float, dev_tokens: int, elapsed: float, *, guided: bool
) -> dict:
    """One line of the metrics file: the epoch's training and dev losses and perplexities, and its speed."""
    record = {
        "epoch": epoch,
        "updates": state["updates"],
        "lr": lr,
        "train_loss": state["loss_sum"] / max(state["tokens"], 1),
        "train_ppl": perplexity(state["loss_sum"], state["tokens"]),
        "dev_loss": dev_nll / max(dev_tokens, 1),
        "dev_ppl": perplexity(dev_nll, dev_tokens),
        "tgt_tokens_per_s": state["tokens"] / max(elapsed, 1e-9),
        "elapsed_s": elapsed,
    }
    if guided:
        record["train_align_loss"] = state["align_sum"] / max(state["sentences"], 1)
    return record


class Sums:
    """The epoch's running loss sums (state["loss_sum"], state["align_sum"]) as float64 tensors on the device;
    `read` writes them back into `state` as Python floats (the same float64 additions in the same order as adding
    Python floats, so a resumed run's numbers are an uninterrupted run's)."""

    def __init__(self, state: dict, device: torch.device, guided: bool):
        self.state = state
        self.keys = ["loss_sum"] + (["align_sum"] if guided else [])
        self.values = {key: torch.tensor(state[key], dtype=torch.float64, device=device) for key in self.keys}

    def add(self, loss: torch.Tensor, align: torch.Tensor | None) -> None:
        self.values["loss_sum"] += loss.to(torch.float64)
        if align is not None:
            self.values["align_sum"] += align.to(torch.float64)

    def read(self) -> None:
        for key in self.keys:
            self.state[key] = self.values[key].item()


def to_device(batch, device: torch.device):
    """The batch on `device`; to a GPU from pinned memory without waiting (the copy overlaps the running update), the
    sentence lengths left on the CPU (pinned), where packing reads them (nmt.models.shared.lengths_on)."""
    if device.type != "cuda":
        return batch.to(device)
    pinned = batch.pin_memory()
    on_device = pinned.to(device, non_blocking=True)
    on_device.src_len = pinned.src_len
    return on_device
