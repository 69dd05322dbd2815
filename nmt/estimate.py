"""What a preset costs: `nmt bench train` measures training throughput of this code, `nmt estimate` turns it into
device-hours per system.

The estimate is plain arithmetic on measured numbers, nothing is assumed about hardware:

    hours(system) = epochs(system) * trained target tokens per epoch / measured target tokens per second / 3600

- epochs come from the resolved system config (dropout systems use `train.dropout_schedule`);
- trained target tokens per epoch = target words + one </s> per sentence of the training split, taken from the
  prepared data (`data/{preset}/{task}/prepared/prep.json`) when it exists, otherwise from the preset's
  `data.tasks.{task}.size` (counts published with the corpus; the preset says where they come from);
- tokens per second come from `nmt bench train`: real training updates (forward, backward, clipping, optimiser step)
  of the system's model at the preset's batch size and vocabulary sizes, on batches of the corpus' mean sentence
  length, on the device it ran on. Systems whose compute is the same (they differ only in source reversal) share a
  measurement.

Decoding and scoring are not included: they take minutes where training takes hours.
"""
from __future__ import annotations

import datetime
import json
import platform
import time
from pathlib import Path

import torch

from . import config as cfg

# Settings that do not change the cost of an update (reversal only reorders the source).
_COST_FREE_MODEL_KEYS = ("reverse",)
_SPECIALS = 4  # <pad> <unk> <s> </s>, added to the top-K words of each side


def training_size(config: dict, task: str, data_root: str | Path | None) -> dict:
    """Training split size of a task: from prep.json when the data is prepared, else the preset's `size`."""
    prep_path = Path(data_root) / task / "prepared" / "prep.json" if data_root is not None else None
    if prep_path is not None and prep_path.is_file():
        prep = json.loads(prep_path.read_text(encoding="utf-8"))
        train = prep["splits"]["train"]
        return {"pairs": train["sentences"], "tgt_words": train["tgt_tokens"],
                "src_vocab": prep["src_vocab"], "tgt_vocab": prep["tgt_vocab"], "source": str(prep_path)}
    spec = cfg.corpus_for_task(config, task)
    size = spec.get("size")
    if not size:
        where = f" ({prep_path} does not exist)" if prep_path is not None else ""
        raise cfg.ConfigError(
            f"preset {config['preset']!r}, task {task}: no training-data size to estimate from{where}. Prepare the data "
            f"first (snakemake --cores all data/{config['preset']}/{task}/prepared/prep.json "
            f"--config preset={config['preset']}) or give "
            f"data.tasks.{task}.size (train_pairs, train_tgt_words, source)")
    prep = cfg.prepare_for_task(config, task)
    return {"pairs": size["train_pairs"], "tgt_words": size["train_tgt_words"],
            "src_vocab": prep["src_vocab"] + _SPECIALS, "tgt_vocab": prep["tgt_vocab"] + _SPECIALS,
            "source": f"data.tasks.{task}.size: {size['source']}"}


def cost_key(resolved: dict, size: dict) -> str:
    """Systems with the same key cost the same per update. Keys added to `model` later count only when they differ
    from their default (nmt.config.comparable_settings), so throughput files measured before stay valid."""
    from .config import comparable_settings
    model = {k: v for k, v in comparable_settings(resolved)["model"].items() if k not in _COST_FREE_MODEL_KEYS}
    return cfg.fingerprint({"model": model, "batch_size": resolved["train"]["batch_size"],
                            "optimizer": resolved["train"]["optimizer"],
                            "vocab": [size["src_vocab"], size["tgt_vocab"]]})


def preset_systems(config: dict, root: str | Path, data_root: str | Path | None) -> list[dict]:
    """Every system the preset trains, with its epochs, training size and cost key."""
    out = []
    for task, systems in cfg.collect_systems(config, root).items():
        size = training_size(config, task, data_root)
        for system, table_path in systems.items():
            table = cfg.load_table(Path(root) / table_path)
            resolved = cfg.system_config(config, table, system, table_path)
            epochs, _ = cfg.training_schedule(resolved["train"], resolved["model"]["dropout"])
            out.append({"task": task, "system": system, "epochs": epochs, "size": size, "resolved": resolved,
                        "key": cost_key(resolved, size)})
    return out


def device_description(device: torch.device) -> str:
    if device.type == "cuda":
        return f"GPU {torch.cuda.get_device_name(device)}"
    cpu = platform.processor() or platform.machine()
    try:  # the model name is more telling than the architecture, where Linux gives it
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU {cpu}, {torch.get_num_threads()} thread(s)"


def measure_throughput(model_cfg: dict, train_cfg: dict, src_vocab: int, tgt_vocab: int, length: int, *,
                       updates: int, warmup: int, device: torch.device, seed: int = 1) -> dict:
    """Time `updates` training updates (after `warmup` untimed ones) on random batches of `batch_size` sentences
    of `length` words per side: the same forward/backward/clip/step as `nmt train`."""
    from .likelihood import batch_nll
    from .data.batches import Batch
    from .models.seq2seq import build_model
    from .train import make_optimizer

    torch.manual_seed(seed)
    model = build_model(model_cfg, src_vocab, tgt_vocab)
    model.init_uniform(train_cfg["init_range"])
    model.to(device).train()
    optimizer = make_optimizer(model.parameters(), train_cfg)
    batch_size = train_cfg["batch_size"]

    def random_batch() -> Batch:
        src = torch.randint(_SPECIALS, src_vocab, (batch_size, length))
        tgt = torch.randint(_SPECIALS, tgt_vocab, (batch_size, length + 1))
        return Batch(src=src, src_len=torch.full((batch_size,), length, dtype=torch.long),
                     tgt_in=tgt[:, :-1], tgt_out=tgt[:, 1:], index=torch.arange(batch_size)).to(device)

    def update(batch: Batch) -> None:
        optimizer.zero_grad(set_to_none=True)
        loss = batch_nll(model, batch)
        (loss / batch_size).backward()
        if train_cfg["clip_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), train_cfg["clip_norm"])
        optimizer.step()

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    batches = [random_batch() for _ in range(min(updates, 4))]
    for i in range(warmup):
        update(batches[i % len(batches)])
    sync()
    started = time.perf_counter()
    for i in range(updates):
        update(batches[i % len(batches)])
    sync()
    seconds = time.perf_counter() - started
    tokens = updates * batch_size * length  # every target position is a real token here (no padding)
    return {"updates": updates, "seconds": seconds, "seconds_per_update": seconds / updates,
            "tgt_tokens_per_s": tokens / seconds}


def bench_train(config: dict, root: str | Path, data_root: str | Path | None, *, updates: int, warmup: int,
                device: torch.device, progress=print) -> dict:
    """Measure each distinct cost of the preset once; the result is what `nmt estimate` reads."""
    systems = preset_systems(config, root, data_root)
    measured: dict[str, dict] = {}
    for entry in systems:
        if entry["key"] in measured:
            measured[entry["key"]]["systems"].append(f"{entry['task']}/{entry['system']}")
            continue
        size, resolved = entry["size"], entry["resolved"]
        length = max(1, round(size["tgt_words"] / max(size["pairs"], 1)))
        progress(f"measuring {entry['task']}/{entry['system']}: {resolved['model']['layers']}x"
                 f"{resolved['model']['hidden']}, vocab {size['src_vocab']}/{size['tgt_vocab']}, batch "
                 f"{resolved['train']['batch_size']}, length {length}, {updates} updates")
        result = measure_throughput(resolved["model"], resolved["train"], size["src_vocab"], size["tgt_vocab"],
                                    length, updates=updates, warmup=warmup, device=device)
        progress(f"  {result['tgt_tokens_per_s']:.0f} target tokens/s ({result['seconds_per_update']:.3f} s/update)")
        measured[entry["key"]] = {"systems": [f"{entry['task']}/{entry['system']}"], "length": length, **result}
    return {"preset": config["preset"], "device": device_description(device), "device_type": device.type,
            "torch": torch.__version__, "date": datetime.date.today().isoformat(),
            "measurements": measured}


def estimate(config: dict, root: str | Path, data_root: str | Path | None, bench: dict) -> dict:
    """Hours per system and in total, from a `bench_train` result for the same preset."""
    if bench.get("preset") != config["preset"]:
        raise cfg.ConfigError(f"the throughput file was measured for preset {bench.get('preset')!r}, "
                              f"not {config['preset']!r}")
    rows = []
    for entry in preset_systems(config, root, data_root):
        measured = bench["measurements"].get(entry["key"])
        if measured is None:
            raise cfg.ConfigError(f"{entry['task']}/{entry['system']}: its model or data size changed since the "
                                  f"throughput was measured; run `nmt bench train --preset {config['preset']}` again")
        size = entry["size"]
        tokens = size["tgt_words"] + size["pairs"]  # + one </s> per sentence, as training counts them
        hours = entry["epochs"] * tokens / measured["tgt_tokens_per_s"] / 3600
        rows.append({"task": entry["task"], "system": entry["system"], "epochs": entry["epochs"],
                     "train_pairs": size["pairs"], "tgt_tokens_per_epoch": tokens,
                     "tgt_tokens_per_s": measured["tgt_tokens_per_s"], "hours": hours, "size_source": size["source"]})
    return {"preset": config["preset"], "device": bench["device"], "device_type": bench["device_type"],
            "measured_on": bench["date"], "torch": bench["torch"], "systems": len(rows),
            "total_hours": sum(r["hours"] for r in rows), "rows": rows}


def format_estimate(result: dict) -> str:
    unit = "GPU-hours" if result["device_type"] == "cuda" else "CPU-hours"
    lines = [f"preset {result['preset']}: {result['systems']} systems to train, "
             f"{result['total_hours']:.3g} {unit} in all (one job at a time on one device)",
             f"throughput measured by `nmt bench train` on {result['device']}, {result['measured_on']}, "
             f"torch {result['torch']}", "",
             f"{'task/system':<44} {'epochs':>6} {'pairs':>10} {'tokens/epoch':>13} {'tok/s':>8} {unit:>10}"]
    for r in result["rows"]:
        lines.append(f"{r['task'] + '/' + r['system']:<44} {r['epochs']:>6} {r['train_pairs']:>10,} "
                     f"{r['tgt_tokens_per_epoch']:>13,} {r['tgt_tokens_per_s']:>8.0f} {r['hours']:>10.3g}")
    sources = sorted({r["size_source"] for r in result["rows"]})
    lines += ["", "training sizes from: " + "; ".join(sources),
              "not included: decoding and scoring (minutes), data download and preparation"]
    return "\n".join(lines)
