"""Timing training updates of a model, as `nmt train` makes them, on random batches: what `nmt bench train` reports
and what `train.precision: auto` decides by on a CPU (nmt.engine.cpu_precision).

Each path (the fast engine in its precision, the eager fp32 reference, fp32 against bf16) gets its own
TrainingStep over one model's parameters, and their updates are timed in turn (nmt.base.timing), so that all of them see
the same moments of the machine."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from ..base.timing import interleaved_medians
from ..data.batches import Batch, make_batch
from ..data.vocab import SPECIALS
from ..models.registry import build_model
from ..settings import ModelSettings, TrainSettings
from .train_step import TrainingStep


def random_batch(batch_size: int, length: int, src_vocab: int, tgt_vocab: int, device: torch.device) -> Batch:
    """A batch of `batch_size` random sentence pairs, `length` source words and `length` target positions (words and
    </s>) a sentence on average, spread like a bucketed training batch's: by up to an eighth of `length` either way,
    in pairs, so that an update has exactly batch_size x length target positions.

    The spread matters. The recurrent layers run packed sequences, whose batch shrinks step by step as sentences
    end; on a CPU that costs bf16 (oneDNN) far more than fp32: the demo's 2x48 base model updated faster in bf16 on
    equal-length batches and about 2x slower on batches whose lengths differ by 2, as its real training did,
    so `train.precision: auto` had chosen bf16 for models that then trained 2-3x slower."""
    spread = min(max(1, length // 8), length - 1)
    offsets = [0] * (batch_size % 2)
    for pair in range(batch_size // 2):  # 1, 2, ..., spread words longer and as many shorter, and again
        k = 1 + pair % spread if spread > 0 else 0
        offsets += [k, -k]
    src = [torch.randint(len(SPECIALS), src_vocab, (length + k,)).tolist() for k in offsets]
    tgt = [torch.randint(len(SPECIALS), tgt_vocab, (length + k - 1,)).tolist() for k in offsets]  # then </s>
    return make_batch(src, tgt, list(range(batch_size))).to(device)


def batch_sentences(train: TrainSettings, length: int) -> int:
    """Sentences per update: train.batch_size, or with train.batch_tokens as many as fit."""
    if train.batch_tokens:
        return max(1, train.batch_tokens // (length + 1))
    return train.batch_size


def time_updates(
    model_cfg: dict,
    train: TrainSettings,
    src_vocab: int,
    tgt_vocab: int,
    length: int,
    *,
    paths: dict[str, dict],
    updates: int,
    warmup: int,
    device: torch.device,
    seed: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, tuple[float, int]], dict[str, TrainingStep], int]:
    """Median milliseconds per update by `clock` (and the number of timed updates) of each path, a path being
    TrainingStep keyword arguments (e.g. {"engine": "eager", "precision": "fp32"}) over `train`, on random
    batches of `length` words a side on average (random_batch): at least `updates` timed updates of each after
    `warmup` untimed ones, in turn. Also returns the steps and the sentences per batch."""
    torch.manual_seed(seed)
    model = build_model(ModelSettings.from_dict(model_cfg), src_vocab, tgt_vocab)
    model.init_uniform(train.init_range)
    model.to(device).train()
    batch_size = batch_sentences(train, length)
    params = list(model.parameters())
    # each its own optimiser over the same parameters
    steps = {name: TrainingStep(model, params, train, device, **kwargs) for name, kwargs in paths.items()}
    batches = [random_batch(batch_size, length, src_vocab, tgt_vocab, device) for _ in range(4)]
    turn = dict.fromkeys(steps, 0)

    def runner(name: str):
        def run():
            steps[name](batches[turn[name] % len(batches)])
            turn[name] += 1

        return run

    timed = interleaved_medians(
        {name: runner(name) for name in steps},
        min_time=0.0,
        min_samples=updates,
        warmup=warmup,
        device=device,
        clock=clock,
    )
    return timed, steps, batch_size
