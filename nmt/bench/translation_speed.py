"""`nmt bench translate`: decoding speed of each distinct model of a preset, greedy and beam search, in sentences per
second at batch 1 and batch 64, on the device it runs on; with --compare-eager the plain path beside it (the eager
engine and the step-by-step reference searches of nmt.decode.search_reference), timed in turn (nmt.base.timing).
Details: docs/internals/bench.md."""

from __future__ import annotations

import datetime
from pathlib import Path

import torch

from .. import config as cfg
from ..base.timing import interleaved_medians
from ..data.batches import make_batch
from ..data.prepare import load_split
from ..decode.search_reference import beam_search_reference, greedy_reference
from ..decode.translate import beam_search, greedy
from ..engine.fast import use
from ..models.registry import build_model
from ..settings import ModelSettings, comparable_settings
from .estimate import _SPECIALS, device_description, preset_systems

BATCHES = (1, 64)


def decode_key(entry: dict) -> str:
    """Systems with the same key decode at the same cost: the model and the vocabularies (not the training recipe)."""
    model = comparable_settings(entry["resolved"])["model"]
    return cfg.fingerprint({"model": model, "vocab": [entry["size"]["src_vocab"], entry["size"]["tgt_vocab"]]})


def test_sources(
    task: str, data_root: str | Path | None, count: int, mean_length: int, src_vocab: int, seed: int = 1
) -> list[list[int]]:
    """`count` source sentences (ids): the prepared test split's first ones, else random of the mean length."""
    path = Path(data_root) / task / "prepared" / "test.pt" if data_root is not None else None
    if path is not None and path.is_file():
        src, _ = load_split(path)
        if len(src) >= count:
            return [list(s) for s in src[:count]]
    gen = torch.Generator().manual_seed(seed)
    return [torch.randint(_SPECIALS, src_vocab, (mean_length,), generator=gen).tolist() for _ in range(count)]


def bench_translate(
    config: dict,
    root: str | Path,
    data_root: str | Path | None,
    *,
    device: torch.device,
    beam: int | None = None,
    compare_eager: bool = False,
    systems: list[str] | None = None,
    min_time: float = 1.0,
    progress=print,
) -> dict:
    beam = beam or config["translate"]["beam"]
    ratio = config["translate"]["max_len_ratio"]
    measured: dict[str, dict] = {}
    for entry in preset_systems(config, root, data_root, systems):
        model_cfg = entry["resolved"]["model"]
        if model_cfg.get("target_foresight"):
            continue
        key = decode_key(entry)
        if key in measured:
            measured[key]["systems"].append(f"{entry['task']}/{entry['system']}")
            continue
        size = entry["size"]
        torch.manual_seed(1)
        model = build_model(ModelSettings.from_dict(model_cfg), size["src_vocab"], size["tgt_vocab"])
        model.init_uniform(entry["resolved"]["train"]["init_range"])
        model.to(device).eval()
        length = max(1, round(size["tgt_words"] / max(size["pairs"], 1)))
        sources = test_sources(entry["task"], data_root, max(BATCHES), length, size["src_vocab"])
        progress(f"decoding with {entry['task']}/{entry['system']}: beam {beam} and greedy, batches {BATCHES}")
        result = {"systems": [f"{entry['task']}/{entry['system']}"], "beam": beam}
        for batch_size in BATCHES:
            batch = make_batch(sources[:batch_size], None, list(range(batch_size))).to(device)
            runs = {}
            for search in ("greedy", "beam"):
                runs[search] = _runner(model, batch, search, beam, ratio, "fast")
                if compare_eager:
                    runs[f"eager_{search}"] = _runner(model, batch, search, beam, ratio, "eager")
            timed = interleaved_medians(runs, min_time=min_time / len(runs), min_samples=3, warmup=1, device=device)
            for name, (ms, _) in timed.items():
                result[f"{name}_sentences_per_s_batch{batch_size}"] = batch_size / (ms / 1000)
        for search in ("greedy", "beam"):
            line = f"  {search}: " + ", ".join(
                f"batch {b} {result[f'{search}_sentences_per_s_batch{b}']:.1f}" for b in BATCHES
            )
            if compare_eager:
                line += " sentences/s; eager " + ", ".join(
                    f"{result[f'eager_{search}_sentences_per_s_batch{b}']:.1f}" for b in BATCHES
                )
            progress(line)
        measured[key] = result
    return {
        "preset": config["preset"],
        "device": device_description(device),
        "device_type": device.type,
        "torch": torch.__version__,
        "date": datetime.date.today().isoformat(),
        "compare_eager": compare_eager,
        "beam": beam,
        "max_len_ratio": ratio,
        "measurements": measured,
    }


def _runner(model, batch, search: str, beam: int, ratio: float, engine: str):
    """One decoding of the batch with `search` on `engine` (eager: the reference searches too)."""

    def run():
        use(model, engine)
        if search == "greedy":
            (greedy if engine == "fast" else greedy_reference)(model, batch.src, batch.src_len, ratio)
        else:
            (beam_search if engine == "fast" else beam_search_reference)(model, batch.src, batch.src_len, beam, ratio)

    return run
