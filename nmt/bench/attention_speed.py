"""`nmt bench attention`: time per decoder step of global vs local attention as the source grows.
Details: docs/internals/bench.md."""

from __future__ import annotations

import datetime
from functools import partial

import torch

from ..base.timing import interleaved_medians
from ..models.attention import GlobalAttention
from ..models.local_attention import LocalAttention
from .estimate import device_description

METHODS = ("global", "local-m", "local-p")


def build_layer(method: str, hidden: int, score: str, window: int, src_len: int) -> torch.nn.Module:
    if method == "global":
        return GlobalAttention(hidden, score, max_src_len=src_len)
    return LocalAttention(hidden, score, method, window=window, reverse=False)


@torch.inference_mode()
def bench_attention(
    *,
    lengths: list[int],
    hidden: int,
    batch: int,
    window: int,
    score: str,
    min_time: float,
    device: torch.device,
    seed: int = 1,
    progress=print,
) -> dict:
    """Per-step times of every method at every source length; see the module docstring."""
    torch.manual_seed(seed)
    rows = []
    for src_len in lengths:
        memory = torch.randn(batch, src_len, hidden, device=device)
        mask = torch.ones(batch, src_len, dtype=torch.bool, device=device)
        query = torch.randn(batch, 1, hidden, device=device)
        # Target step t = src_len // 2: local-m's window lies inside the sentence, like a mid-sentence step.
        steps = torch.tensor([src_len // 2], device=device)
        layers = {method: build_layer(method, hidden, score, window, src_len).to(device).eval() for method in METHODS}
        keys = shared_keys(layers, memory)
        context = interleaved_medians(
            {m: partial(layers[m].context, query, memory, keys[m], mask, steps) for m in METHODS},
            min_time=min_time,
            device=device,
        )
        whole = interleaved_medians(
            {m: partial(layers[m], query, memory, keys[m], mask, steps) for m in METHODS},
            min_time=min_time,
            device=device,
        )
        for method in METHODS:
            (context_ms, calls), (layer_ms, _) = context[method], whole[method]
            rows.append(
                {"src_len": src_len, "method": method, "context_ms": context_ms, "layer_ms": layer_ms, "calls": calls}
            )
            progress(f"S={src_len:>5} {method:<8} context {context_ms:9.3f} ms/step   layer {layer_ms:9.3f} ms/step")
        del layers, keys
        del memory, mask, query
    return {
        "benchmark": "attention",
        "device": device_description(device),
        "device_type": device.type,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "date": datetime.date.today().isoformat(),
        "hidden": hidden,
        "batch": batch,
        "window": window,
        "score": score,
        "min_time_s": min_time,
        "rows": rows,
        "speedups": speedups(rows),
    }


def shared_keys(layers: dict[str, torch.nn.Module], memory: torch.Tensor) -> dict[str, torch.Tensor | None]:
    """Every layer's keys for `memory`, computed once: the layers are given the first one's parameters wherever they
    have the same name and shape (the score's W_a, the attentional W_c), so their keys are the same tensor. At the
    paper's sizes the keys are a [B*S, H] x [H, H] product (seconds at S = 1000 on a CPU core) that no step times."""
    first, *others = layers.values()
    reference = first.state_dict()
    for layer in others:
        own = layer.state_dict()
        layer.load_state_dict(
            {name: value for name, value in reference.items() if name in own and own[name].shape == value.shape},
            strict=False,
        )
    keys = first.keys(memory)  # (local layers are global ones with a window: the same keys method)
    return dict.fromkeys(layers, keys)


def speedups(rows: list[dict]) -> list[dict]:
    """Global time / local time per source length, for the context and for the whole layer."""
    by = {(r["src_len"], r["method"]): r for r in rows}
    out = []
    for src_len in sorted({r["src_len"] for r in rows}):
        g = by.get((src_len, "global"))
        entry = {"src_len": src_len}
        for method in METHODS[1:]:
            local = by.get((src_len, method))
            if g and local:
                entry[f"{method}_context"] = g["context_ms"] / local["context_ms"]
                entry[f"{method}_layer"] = g["layer_ms"] / local["layer_ms"]
        out.append(entry)
    return out
