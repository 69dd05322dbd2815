"""Timing shared by the `nmt bench` commands that compare methods: medians of calls made in turn.

A comparison of two methods is only as good as the conditions both were measured under. Calling the methods one
after the other, round after round, rather than timing one and then the other, means that whatever else the
machine does during the run (another job, frequency changes) slows all of them alike, so their ratio is stable
across runs. The median, not the mean, keeps a rare slow call (a page fault, an interrupt) out of the result.

When the methods differ a lot in speed (a hundredfold), equal numbers of calls would give the slow one a hundred
times the time budget. With `sample_time` each timed sample is a run of back-to-back calls of one method, as many
as last at least sample_time seconds (sized from its last warm-up call), so every method gets about the same time
and the same number of samples, still taken in turn.

The clock is wall time (time.perf_counter) unless told otherwise. A decision this process takes for itself on a shared
CPU (nmt.engine.cpu_precision) uses its CPU time (time.process_time): time slices that other jobs take from it then
count against neither method, where in wall time a burst of another job's work during one method's samples can turn the
ratio around.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Hashable

import torch


def interleaved_medians(fns: dict[Hashable, Callable[[], object]], *, min_time: float, min_samples: int = 3,
                        warmup: int = 2, sample_time: float = 0.0, device: torch.device | None = None,
                        clock: Callable[[], float] = time.perf_counter) -> dict[Hashable, tuple[float, int]]:
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
