"""Timing shared by the `nmt bench` commands that compare methods: medians of calls made in turn.
Details: docs/internals/base.md."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Hashable

import torch


def interleaved_medians(
    fns: dict[Hashable, Callable[[], object]],
    *,
    min_time: float,
    min_samples: int = 3,
    warmup: int = 2,
    sample_time: float = 0.0,
    device: torch.device | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[Hashable, tuple[float, int]]:
    """Median time in milliseconds of one call of each fn() by `clock` (and the number of timed calls), sampled in
    turn, round after round, until every one has had min_time seconds and min_samples samples. Each fn is called
    `warmup` times first, untimed (at least once when sample_time is set, to size its samples). On a CUDA device
    every sample is followed by a synchronisation, so it is timed whole."""

    def sync():
        if device is not None and device.type == "cuda":
            torch.cuda.synchronize(device)

    per_sample = {}
    for name, fn in fns.items():
        took = 0.0
        for _ in range(max(warmup, 1 if sample_time > 0 else 0)):
            t0 = clock()
            fn()
            sync()
            took = clock() - t0
        per_sample[name] = max(1, math.ceil(sample_time / took)) if sample_time > 0 and took > 0 else 1
    times: dict[Hashable, list[float]] = {name: [] for name in fns}
    totals = dict.fromkeys(fns, 0.0)
    while any(len(times[name]) < min_samples or totals[name] < min_time for name in fns):
        for name, fn in fns.items():
            number = per_sample[name]
            t0 = clock()
            for _ in range(number):
                fn()
            sync()
            elapsed = clock() - t0
            times[name].append(elapsed / number)
            totals[name] += elapsed
    return {name: (statistics.median(t) * 1000, len(t) * per_sample[name]) for name, t in times.items()}
