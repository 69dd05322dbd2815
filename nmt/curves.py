"""Live training curves: TensorBoard event files beside a training's metrics.jsonl.

`tensorboard --logdir results/PRESET` shows every system of a run as it trains: per evaluation the dev perplexity
(and per epoch the train perplexity, the learning rate and the target tokens per second), and every
RUNNING_EVERY updates the epoch's running train perplexity, all against the number of updates. (No gradient norm:
the update clips it inside the fused step and does not return it.) The files are
written with PyTorch's SummaryWriter, which needs the `tensorboard` package (the `curves` extra); without it a
training says once that curves are off and trains as before. metrics.jsonl stays the record the pipeline reads:
the event files are for watching.

A resumed training purges the events after the update it resumes from (SummaryWriter's purge_step), so the curves
of a killed and resumed run are those of an uninterrupted one.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

CURVES_DIR = "tensorboard"  # beside metrics.jsonl, in the model's directory
RUNNING_EVERY = 100  # updates between two points of the running train perplexity

try:  # optional: the `curves` extra
    from torch.utils.tensorboard import SummaryWriter
except ImportError:  # pragma: no cover - exercised where tensorboard is not installed
    SummaryWriter = None


class Curves:
    """The event files of one training (no-ops without tensorboard)."""

    def __init__(self, out_dir: str | Path, system: str, resume_from: int = 0, log: Callable[[str], None] = print):
        self.writer = None
        if SummaryWriter is None:
            log(f"[{system}] no live curves: the tensorboard package is not installed "
                f"(pip install -e '.[curves]'); metrics.jsonl has every evaluation")
            return
        # a killed process's events after the update this one resumes from (its checkpoint's) are dropped
        self.writer = SummaryWriter(log_dir=str(Path(out_dir) / CURVES_DIR),
                                    purge_step=resume_from + 1 if resume_from else None)

    def wants_running(self, updates: int) -> bool:
        """Whether this update adds a point of the running train perplexity (the caller reads the sums for it)."""
        return self.writer is not None and updates % RUNNING_EVERY == 0

    def running(self, updates: int, loss_sum: float, tokens: int) -> None:
        """The epoch's train perplexity so far, every RUNNING_EVERY updates (the learning rate, constant within an
        epoch, is drawn per epoch)."""
        if self.wants_running(updates) and tokens:
            self.writer.add_scalar("train/running_ppl", math.exp(loss_sum / tokens), updates)

    def evaluation(self, updates: int, dev_ppl: float, dev_bleu: float | None = None) -> None:
        if self.writer is None:
            return
        self.writer.add_scalar("dev/ppl", dev_ppl, updates)
        if dev_bleu is not None:  # train.best_by: dev_bleu
            self.writer.add_scalar("dev/bleu", dev_bleu, updates)

    def epoch(self, updates: int, record: dict) -> None:
        """An epoch's record (metrics.jsonl's line): its train perplexity, learning rate and speed."""
        if self.writer is None:
            return
        self.writer.add_scalar("train/ppl", record["train_ppl"], updates)
        self.writer.add_scalar("train/lr", record["lr"], updates)
        self.writer.add_scalar("train/tgt_tokens_per_s", record["tgt_tokens_per_s"], updates)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
