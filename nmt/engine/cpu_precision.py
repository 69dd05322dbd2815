"""`train.precision: auto` on a CPU: bf16 where an update of the model is measured faster in bf16, fp32 elsewhere.
Details: docs/internals/engine.md."""

from __future__ import annotations

import json
import re
import time

import torch

from ..base import compiled
from ..base.atomic import write_text_atomic
from ..settings import TrainSettings
from . import mkl_on_amd
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
    key = [
        "cpu time, unequal lengths",
        compiled.processor(),
        torch.__version__,
        str(torch.get_num_threads()),
        str(mkl_on_amd.active()),
        json.dumps(model_cfg, sort_keys=True),
        str(src_vocab),
        str(tgt_vocab),
        str(length),
        json.dumps(
            {k: getattr(train, k) for k in ("batch_size", "batch_tokens", "optimizer", "clip_norm")}, sort_keys=True
        ),
    ]

    def measure(target):
        with torch.random.fork_rng(devices=[]):  # the training's own random draws as if nothing were measured
            timed, _, _ = time_updates(
                model_cfg,
                train.replace(engine="fast"),
                src_vocab,
                tgt_vocab,
                length,
                paths={"fp32": {"precision": "fp32"}, "bf16": {"precision": "bf16"}},
                updates=UPDATES,
                warmup=WARMUP,
                device=torch.device("cpu"),
                clock=time.process_time,
            )
        ratio = timed["fp32"][0] / timed["bf16"][0]
        write_text_atomic(
            target,
            json.dumps(
                {
                    "precision": "bf16" if ratio >= MARGIN else "fp32",
                    "bf16_speedup": ratio,
                    "fp32_ms": timed["fp32"][0],
                    "bf16_ms": timed["bf16"][0],
                }
            )
            + "\n",
        )

    decision = json.loads(compiled.cached_file("precision", key, "decision.json", measure).read_text())
    return decision["precision"], (
        f"auto: bf16 updates measured {decision['bf16_speedup']:.2f}x fp32's on this CPU"
        f" ({'at least' if decision['precision'] == 'bf16' else 'under'} {MARGIN}x)"
    )


def resolve(
    model_cfg: dict, train: TrainSettings, src_vocab: int, tgt_vocab: int, length: int, device: torch.device
) -> tuple[str, str | None]:
    """The precision a training of this model runs in (train.precision with `auto` decided for a CPU) and, for an
    `auto` decided here, why."""
    precision = train.precision
    if precision != "auto" or device.type != "cpu" or train.engine != "fast":
        return precision, None
    return choose(model_cfg, train, src_vocab, tgt_vocab, length)
