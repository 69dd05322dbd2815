"""`train.precision: auto` on a CPU: bf16 where an update of the model is measured faster in bf16, fp32 elsewhere.

Why measured, not assumed: bf16 autocast pays on a CPU only where the processor multiplies bf16 natively (x86's
AVX512-BF16 or AMX, Arm's BF16) and the model's products are large enough to outweigh autocast's casts. On an AMD
EPYC with AVX512-BF16 the small preset's 2x256 global (general) + feed model
updated 1.35x faster in bf16 than in fp32, while the tiny preset's 1x32 models were four times slower; on an
AVX512-BF16 Xeon without AMX bf16 was no faster at all (docs/benchmarks.md, "Training speed"). So `auto` times a
few updates of the model itself, fp32 and bf16 in turn on random batches of its batch size and sentence length
(nmt.engine.update_timing), and takes bf16 when it is at least MARGIN times as fast. The updates are timed in this
process's CPU time, not wall time: a training measures while other jobs share the machine (the demo runs two at a
time on 2 cores), and in wall time the other jobs' bursts decided it. The demo's RNNsearch measured
1.12x in wall time beside other jobs (fp32 updates 33 ms, bf16 30 ms) and 0.65x alone (15 ms, 23 ms), so it trained
in bf16 at about two thirds of fp32's speed. And the batches' sentences differ in length, as a training's do (why:
nmt.engine.update_timing.random_batch). Its dev perplexity after an epoch is that of fp32 within the seeds' spread
(`nmt bench train --epoch-check`, docs/benchmarks.md).

The decision is cached per processor, torch version, threads, BLAS code path and model shape
(cache_dir()/precision), so that every training of that model on that machine makes the same choice and seeded runs
stay identical; a resumed run keeps the precision its checkpoint records (nmt.training.run). A processor without native
bf16 products is fp32 without a measurement; so is the eager engine (the reference) and every explicit setting.
"""
from __future__ import annotations

import json
import re
import time

import torch

from ..base import compiled
from . import mkl_on_amd
from ..data.text import write_text_atomic
from ..settings import TrainSettings
from .update_timing import time_updates

MARGIN = 1.1  # bf16 only when clearly faster: a near tie stays fp32, the precision every numerical test uses
UPDATES, WARMUP = 8, 3  # timed and untimed updates of each precision (the first bf16 ones set up oneDNN)


def native_bf16() -> bool:
    """Whether this processor multiplies bf16 natively (/proc/cpuinfo's flags: avx512_bf16, amx_bf16; Arm: bf16)."""
    return re.search(r"\b(avx512_bf16|amx_bf16|bf16)\b", compiled.processor()) is not None


def choose(model_cfg: dict, train: TrainSettings, src_vocab: int, tgt_vocab: int, length: int) -> tuple[str, str]:
    """("bf16" or "fp32", why) for `train.precision: auto` with the fast engine on this CPU; measured once per
    machine and model shape, then read from the cache."""
    if not native_bf16():
        return "fp32", "no native bf16 products on this CPU"
    # the method's name: decisions an earlier method timed (wall time, equal-length batches) are not reused
    key = ["cpu time, unequal lengths", compiled.processor(), torch.__version__, str(torch.get_num_threads()),
           str(mkl_on_amd.active()), json.dumps(model_cfg, sort_keys=True), str(src_vocab), str(tgt_vocab), str(length),
           json.dumps({k: getattr(train, k) for k in ("batch_size", "batch_tokens", "optimizer", "clip_norm")},
                      sort_keys=True)]

    def measure(target):
        with torch.random.fork_rng(devices=[]):  # the training's own random draws as if nothing were measured
            timed, _, _ = time_updates(model_cfg, train.replace(engine="fast"), src_vocab, tgt_vocab, length,
                                       paths={"fp32": {"precision": "fp32"}, "bf16": {"precision": "bf16"}},
                                       updates=UPDATES, warmup=WARMUP, device=torch.device("cpu"),
                                       clock=time.process_time)
        ratio = timed["fp32"][0] / timed["bf16"][0]
        write_text_atomic(target, json.dumps({"precision": "bf16" if ratio >= MARGIN else "fp32", "bf16_speedup": ratio,
                                      "fp32_ms": timed["fp32"][0], "bf16_ms": timed["bf16"][0]}) + "\n")

    decision = json.loads(compiled.cached_file("precision", key, "decision.json", measure).read_text())
    return decision["precision"], (f"auto: bf16 updates measured {decision['bf16_speedup']:.2f}x fp32's on this CPU"
                                   f" ({'at least' if decision['precision'] == 'bf16' else 'under'} {MARGIN}x)")


def resolve(model_cfg: dict, train: TrainSettings, src_vocab: int, tgt_vocab: int, length: int,
            device: torch.device) -> tuple[str, str | None]:
    """The precision a training of this model runs in (train.precision with `auto` decided for a CPU) and, for an
    `auto` decided here, why."""
    precision = train.precision
    if precision != "auto" or device.type != "cpu" or train.engine != "fast":
        return precision, None
    return choose(model_cfg, train, src_vocab, tgt_vocab, length)
