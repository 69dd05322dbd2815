"""Timing training updates of a model, as `nmt train` makes them, on random batches: what `nmt bench train` reports
and what `train.precision: auto` decides by on a CPU (nmt.cpu_precision).

Each path (the fast engine in its precision, the eager fp32 reference, fp32 against bf16) gets its own
TrainingStep over one model's parameters, and their updates are timed in turn (nmt.timing), so that all of them see
the same moments of the machine."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch

from .data.batches import Batch
from .data.vocab import SPECIALS
from .models.registry import build_model
from .timing import interleaved_medians
from .train_step import TrainingStep


def random_batch(batch_size: int, length: int, src_vocab: int, tgt_vocab: int, device: torch.device) -> Batch:
    """A batch of `batch_size` random sentence pairs of `length` words a side (every position a real word)."""
    src = torch.randint(len(SPECIALS), src_vocab, (batch_size, length))
    tgt = torch.randint(len(SPECIALS), tgt_vocab, (batch_size, length + 1))
    return Batch(src=src, src_len=torch.full((batch_size,), length, dtype=torch.long),
                 tgt_in=tgt[:, :-1], tgt_out=tgt[:, 1:], index=torch.arange(batch_size)).to(device)


def batch_sentences(train_cfg: dict, length: int) -> int:
    """Sentences per update: train.batch_size, or with train.batch_tokens as many as fit."""
    if train_cfg.get("batch_tokens"):
        return max(1, train_cfg["batch_tokens"] // (length + 1))
    return train_cfg["batch_size"]


def time_updates(model_cfg: dict, train_cfg: dict, src_vocab: int, tgt_vocab: int, length: int, *,
                 paths: dict[str, dict], updates: int, warmup: int, device: torch.device, seed: int = 1,
                 clock: Callable[[], float] = time.perf_counter
                 ) -> tuple[dict[str, tuple[float, int]], dict[str, TrainingStep], int]:
    """Median milliseconds per update by `clock` (and the number of timed updates) of each path, a path being
    TrainingStep keyword arguments (e.g. {"engine": "eager", "precision": "fp32"}) over `train_cfg`, on random
    batches of `length` words a side: at least `updates` timed updates of each after `warmup` untimed ones, in turn.
    Also returns the steps and the sentences per batch."""
    torch.manual_seed(seed)
    model = build_model(model_cfg, src_vocab, tgt_vocab)
    model.init_uniform(train_cfg["init_range"])
    model.to(device).train()
    batch_size = batch_sentences(train_cfg, length)
    params = list(model.parameters())
    # each its own optimiser over the same parameters
    steps = {name: TrainingStep(model, params, train_cfg, device, **kwargs) for name, kwargs in paths.items()}
    batches = [random_batch(batch_size, length, src_vocab, tgt_vocab, device) for _ in range(4)]
    turn = dict.fromkeys(steps, 0)

    def runner(name: str):
        def run():
            steps[name](batches[turn[name] % len(batches)])
            turn[name] += 1
        return run

    timed = interleaved_medians({name: runner(name) for name in steps}, min_time=0.0, min_samples=updates,
                                warmup=warmup, device=device, clock=clock)
    return timed, steps, batch_size
