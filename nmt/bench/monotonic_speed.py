"""`nmt bench monotonic`: softmax attention vs Raffel et al.'s (2017) hard monotonic attention at test time.
Details: docs/internals/bench.md."""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import math
from pathlib import Path

import numpy as np
import torch

from ..base.timing import interleaved_medians
from ..data.vocab import BOS_ID, SPECIALS
from ..engine.decoding_cache import decoding_cache
from ..engine.fast import use
from ..models.monotonic import set_monotonic_mode
from ..models.registry import build_model
from ..settings import ModelSettings
from .estimate import device_description

SAMPLES_PER_CELL = 10  # timed samples per method and grid cell: each lasts about min_time / 10 (nmt.base.timing)
# The decoders of the decoding measurement: (name, overrides of the preset's model config, monotonic mode).
# energy_bias 0: with random weights and the usual r = -1 every p is < 0.5, so the hard process would run off the
# memory at the first step and do nothing after it (the cheapest case); with r = 0 it attends at every step.
# The decoder without attention is the baseline: what a step costs besides the attention (its time subtracted
# from the others' gives the attention's own cost; it has no input feeding, so that is slightly overstated).
BASELINE = "no-attention"
DECODERS = (
    ("softmax", {"attention": "global", "score": "general", "reverse": False, "input_feed": True}, None),
    (
        "hard-monotonic",
        {"attention": "monotonic", "energy": "eq17", "energy_bias": 0.0, "reverse": False, "input_feed": True},
        "hard",
    ),
    (BASELINE, {"attention": "none", "reverse": False, "input_feed": False}, None),
)


# -- the two attention mechanisms, as tight as each other --------------------------------------------------------
def softmax_contexts(memory: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Softmax attention with dot-product energy: c_i = sum_j softmax_j(h_j . s_i) h_j for every state s_i [U, d]
    against the memory h [T, d]; contexts [U, d]."""
    contexts = np.zeros_like(states)
    for i in range(len(states)):
        energy = memory.dot(states[i])
        energy -= energy.max()
        np.exp(energy, out=energy)
        energy /= energy.sum()
        np.dot(energy, memory, out=contexts[i])
    return contexts


def hard_monotonic_contexts(memory: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Raffel et al.'s algorithm 1 (test time) with dot-product energy: for each state s_i, walk the memory from
    where the last step stopped and attend to the first h_j with sigmoid(h_j . s_i) >= 0.5 (c_i = h_j); when the
    memory runs out, c_i = 0 for this step and every later one, and nothing more is computed. Contexts [U, d]."""
    length = len(memory)
    contexts = np.zeros_like(states)
    j = 0
    for i in range(len(states)):
        state = states[i]
        while j < length:
            # sigmoid(e) as (1 + tanh(e / 2)) / 2: the same value, and no overflow for any energy
            p = 0.5 + 0.5 * math.tanh(0.5 * float(memory[j].dot(state)))
            if p >= 0.5:
                break
            j += 1
        else:
            return contexts
        contexts[i] = memory[j]
    return contexts


def attended_positions(memory: np.ndarray, states: np.ndarray) -> list[int]:
    """The memory entry each output step of the hard process attends to, -1 once the memory is exhausted; from
    all T x U energies at once (a check of the walk, and its statistics; not timed)."""
    selected = states @ memory.T >= 0.0  # sigmoid(e) >= 0.5
    positions, j = [], 0
    for row in selected:
        ahead = row[j:]
        if not ahead.any():
            return positions + [-1] * (len(states) - len(positions))
        j += int(ahead.argmax())
        positions.append(j)
    return positions


# -- one thread for numpy's BLAS ----------------------------------------------------------------------------------
_OPENBLAS_CALLS = (
    ("openblas_get_num_threads", "openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
)


def _loaded_openblas() -> list[tuple]:
    """(get, set) thread-count functions of every OpenBLAS this process has loaded (numpy's wheels bundle one);
    found through /proc/self/maps, so Linux only, [] elsewhere."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = sorted(
        {
            line.split()[-1]
            for line in maps.splitlines()
            if "/" in line and "openblas" in line.rsplit("/", 1)[-1].lower()
        }
    )
    calls = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _OPENBLAS_CALLS:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                calls.append((getattr(lib, get_name), getattr(lib, set_name)))
                break
    return calls


@contextlib.contextmanager
def blas_threads(threads: int):
    """numpy's BLAS limited to `threads` threads inside the block; yields the number in force there (None: no
    BLAS found whose threads this can read)."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=threads, user_api="blas"):
            counts = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
            yield max(counts) if counts else None
        return
    calls = _loaded_openblas()
    before = [get() for get, _ in calls]
    for _, set_threads in calls:
        set_threads(threads)
    try:
        yield max(get() for get, _ in calls) if calls else None
    finally:
        for (_, set_threads), count in zip(calls, before):
            set_threads(count)


# -- the context benchmark ---------------------------------------------------------------------------------------
def bench_contexts(
    *, input_lengths: list[int], output_lengths: list[int], dim: int, min_time: float, seed: int = 1, progress=print
) -> list[dict]:
    """Per cell (T, U): median ms to compute all U contexts with each method, and what the hard process did."""
    rng = np.random.default_rng(seed)
    cells = []
    for length in input_lengths:
        for steps in output_lengths:
            memory = rng.uniform(-1.0, 1.0, (length, dim)).astype(np.float32)
            states = rng.uniform(-1.0, 1.0, (steps, dim)).astype(np.float32)
            timed = interleaved_medians(
                {
                    "softmax": lambda: softmax_contexts(memory, states),
                    "hard": lambda: hard_monotonic_contexts(memory, states),
                },
                min_time=min_time,
                sample_time=min_time / SAMPLES_PER_CELL,
            )
            positions = attended_positions(memory, states)
            attended = sum(1 for j in positions if j >= 0)
            pointer = length if attended < steps else positions[-1]
            (softmax_ms, softmax_calls), (hard_ms, hard_calls) = timed["softmax"], timed["hard"]
            cells.append(
                {
                    "T": length,
                    "U": steps,
                    "softmax_ms": softmax_ms,
                    "hard_ms": hard_ms,
                    "speedup": softmax_ms / hard_ms,
                    "softmax_calls": softmax_calls,
                    "hard_calls": hard_calls,
                    "attended_steps": attended,
                    "softmax_energies": length * steps,
                    "hard_energies": pointer + attended,
                }
            )
            progress(
                f"T={length:>5} U={steps:>5} softmax {softmax_ms:9.3f} ms  hard {hard_ms:9.3f} ms  "
                f"{softmax_ms / hard_ms:6.1f}x  (memory lasted {attended}/{steps} steps)"
            )
    return cells


# -- the decoding benchmark --------------------------------------------------------------------------------------
def decoder_model(
    base: dict, overrides: dict, mode: str | None, *, hidden: int, layers: int, vocab: int, max_len: int
) -> torch.nn.Module:
    """A model of this project from the preset's model config, at the benchmark's size, random weights, eval
    mode; `mode` switches a monotonic model's attention to that process (hard: the linear-time one)."""
    config = {
        **base,
        "arch": "luong",
        "hidden": hidden,
        "embed": hidden,
        "layers": layers,
        "dropout": 0.0,
        "max_src_len": max_len,
        **overrides,
    }
    model = use(build_model(ModelSettings.from_dict(config), vocab, vocab), "fast").eval()
    if mode is not None:
        set_monotonic_mode(model, mode)
    return model


def greedy_decode(model: torch.nn.Module, src: torch.Tensor, steps: int, weights: list | None = None) -> torch.Tensor:
    """Encode src [1, L] and take exactly `steps` greedy steps (argmax; </s> does not stop it); the last word.
    The attention weights of each step are appended to `weights` when a list is given. The decoder's rearranged
    weights are made once per decoding, as `nmt translate` makes them (nmt.engine.decoding_cache)."""
    with decoding_cache(model):
        enc = model.encode(src, torch.tensor([src.size(1)]))
        state = model.initial_state(enc)
        prev = torch.full((src.size(0),), BOS_ID, dtype=torch.long)
        for _ in range(steps):
            log_probs, state, step_weights = model.step(prev, enc, state)
            prev = log_probs.argmax(-1)
            if weights is not None:
                weights.append(step_weights)
    return prev


def attention_walk(model: torch.nn.Module, src: torch.Tensor, steps: int) -> dict:
    """What the attention did in one decoding: how many steps attended to some source word, the last word attended
    (argmax of the weights) and the energies computed (counted by a layer that counts them, the hard monotonic
    one; otherwise every source word at every step)."""
    counters = [m for m in model.modules() if hasattr(m, "energy_evaluations")]
    for layer in counters:
        layer.energy_evaluations = 0
    weights = []
    greedy_decode(model, src, steps, weights)
    attended = [w for w in weights if w is not None and float(w.sum()) > 0]
    if counters:
        energies = sum(m.energy_evaluations for m in counters)
    else:
        energies = 0 if all(w is None for w in weights) else src.size(1) * steps
    return {
        "attended_steps": len(attended),
        "last_position": int(attended[-1].argmax()) if attended else None,
        "energies": energies,
    }


def growth(rows: list[dict]) -> dict:
    """How a method's time grows with L: least-squares line ms = a + b L (b: ms per extra source word, with R^2),
    and from the largest L' <= L_max / 2 to L_max the ratio of times and its log-log slope (1: linear, 2:
    quadratic; left out unless both times are positive, as a difference of times may not be)."""
    lengths = np.array([r["length"] for r in rows], dtype=float)
    times = np.array([r["ms"] for r in rows], dtype=float)
    out = {}
    if len(rows) >= 2:
        slope, intercept = np.polyfit(lengths, times, 1)
        residual = times - (intercept + slope * lengths)
        spread = ((times - times.mean()) ** 2).sum()
        out.update(
            slope_ms_per_word=float(slope),
            intercept_ms=float(intercept),
            r2=float(1 - (residual**2).sum() / spread) if spread > 0 else 1.0,
        )
    by = {r["length"]: r["ms"] for r in rows}
    top = max(by)
    halves = [length for length in by if length <= top / 2]
    if halves and by[max(halves)] > 0 and by[top] > 0:
        half = max(halves)
        ratio = by[top] / by[half]
        out.update(
            {"from_length": half, "to_length": top, "ratio": ratio, "exponent": math.log(ratio) / math.log(top / half)}
        )
    return out


@torch.inference_mode()
def bench_decoding(
    *,
    base_model: dict,
    lengths: list[int],
    hidden: int,
    layers: int,
    vocab: int,
    repeats: int,
    seed: int = 1,
    decoders=DECODERS,
    progress=print,
) -> dict:
    """Median ms of whole greedy decoding (encode + L steps) per source length L and decoder. Every (decoder,
    length) pair is decoded once per round, so a slow spell of the machine hits every length alike and the growth
    with L is not an artefact of when each length was measured."""
    torch.manual_seed(seed)
    models = {
        name: decoder_model(
            base_model, overrides, mode, hidden=hidden, layers=layers, vocab=vocab, max_len=max(lengths)
        )
        for name, overrides, mode in decoders
    }
    generator = torch.Generator().manual_seed(seed)
    sources = {length: torch.randint(len(SPECIALS), vocab, (1, length), generator=generator) for length in lengths}
    shortest = min(lengths)
    for model in models.values():  # warm-up: the first calls of a model set up its kernels
        greedy_decode(model, sources[shortest], shortest)
    timed = interleaved_medians(
        {
            (name, length): (lambda m=model, n=length: greedy_decode(m, sources[n], n))
            for length in lengths
            for name, model in models.items()
        },
        min_time=0.0,
        min_samples=repeats,
        warmup=0,
    )
    rows = []
    for length in lengths:
        for name, model in models.items():
            ms, calls = timed[(name, length)]
            rows.append(
                {
                    "length": length,
                    "method": name,
                    "ms": ms,
                    "ms_per_word": ms / length,
                    "calls": calls,
                    **attention_walk(model, sources[length], length),
                }
            )
            progress(f"L=U={length:>5} {name:<15} {ms:10.2f} ms  {ms / length:7.3f} ms/word")
    return {
        "hidden": hidden,
        "layers": layers,
        "vocab": vocab,
        "repeats": repeats,
        "methods": list(models),
        "models": {name: {**overrides, **({"mode": mode} if mode else {})} for name, overrides, mode in decoders},
        "rows": rows,
        "growth": {name: growth([r for r in rows if r["method"] == name]) for name in models},
        "baseline": BASELINE if BASELINE in models else None,
        "attention_growth": attention_growth(rows, list(models)),
    }


def attention_growth(rows: list[dict], methods: list[str]) -> dict:
    """The growth of each decoder's time minus the baseline's (no attention) at the same L: the attention's own
    cost; {} without a baseline."""
    if BASELINE not in methods:
        return {}
    base = {r["length"]: r["ms"] for r in rows if r["method"] == BASELINE}
    return {
        name: growth([{"length": r["length"], "ms": r["ms"] - base[r["length"]]} for r in rows if r["method"] == name])
        for name in methods
        if name != BASELINE
    }


def bench_monotonic(
    *,
    input_lengths: list[int],
    output_lengths: list[int],
    dim: int,
    min_time: float,
    decode_lengths: list[int],
    decode_hidden: int,
    decode_layers: int,
    decode_vocab: int,
    decode_repeats: int,
    base_model: dict,
    threads: int = 1,
    seed: int = 1,
    decoders=DECODERS,
    progress=print,
) -> dict:
    """Both measurements of the module docstring, numpy's BLAS limited to `threads` threads (torch's threads are
    the caller's)."""
    with blas_threads(threads) as blas:
        contexts = bench_contexts(
            input_lengths=input_lengths,
            output_lengths=output_lengths,
            dim=dim,
            min_time=min_time,
            seed=seed,
            progress=progress,
        )
        decoding = bench_decoding(
            base_model=base_model,
            lengths=decode_lengths,
            hidden=decode_hidden,
            layers=decode_layers,
            vocab=decode_vocab,
            repeats=decode_repeats,
            seed=seed,
            decoders=decoders,
            progress=progress,
        )
    cpu = torch.device("cpu")
    return {
        "benchmark": "monotonic",
        "device": device_description(cpu),
        "device_type": cpu.type,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "blas_threads": blas,
        "date": datetime.date.today().isoformat(),
        "seed": seed,
        "contexts": {
            "dim": dim,
            "dtype": "float32",
            "energy": "dot",
            "min_time_s": min_time,
            "input_lengths": list(input_lengths),
            "output_lengths": list(output_lengths),
            "cells": contexts,
        },
        "decoding": decoding,
    }
