"""What a preset costs: `nmt bench train` measures training throughput of this code, `nmt estimate` turns it into
device-hours per system.
Details: docs/internals/bench.md."""

from __future__ import annotations

import datetime
import platform
import statistics
import sys
import tempfile
from pathlib import Path

import torch

from .. import config as cfg
from ..base.files import read_json
from ..config import plan
from ..config.schema import validator
from ..data.corpus import split_sources
from ..data.corpus_registry import load_registry
from ..data.vocab import SPECIALS
from ..engine import cpu_precision, mkl_on_amd
from ..engine.update_timing import time_updates
from ..records.benchmarks import throughput_path
from ..records.report_files import CLAIMS_NAME
from ..scoring.difference import seeds_range_text
from ..settings import SystemSettings, TrainSettings, comparable_settings
from ..training.run import train

# Settings that do not change the cost of an update (reversal only reorders the source).
_COST_FREE_MODEL_KEYS = ("reverse",)
_SPECIALS = len(SPECIALS)  # <pad> <unk> <s> </s>, added to the top-K words of each side


def training_size(config: dict, task: str, data_root: str | Path | None) -> dict:
    """Training split size of a task: from prep.json when the data is prepared, else the preset's `size`, else only
    the stated number of sentences (`stated_pairs`; tgt_words None: the caller takes a mean length from elsewhere).
    Without prepared data the vocabularies are the preset's sizes (a corpus with fewer words has smaller ones)."""
    prep_path = _prep_path(data_root, task)
    if prep_path is not None and prep_path.is_file():
        prep = read_json(prep_path, "a prepared corpus's statistics", schema=validator("data-stats", "prepared"))
        train = prep["splits"]["train"]
        return {
            "pairs": train["sentences"],
            "tgt_words": train["tgt_tokens"],
            "src_vocab": prep["src_vocab"],
            "tgt_vocab": prep["tgt_vocab"],
            "source": str(prep_path),
        }
    prep = cfg.prepare_for_task(config, task)
    vocab = {"src_vocab": prep["src_vocab"] + _SPECIALS, "tgt_vocab": prep["tgt_vocab"] + _SPECIALS}
    size = cfg.corpus_for_task(config, task).get("size")
    if size:
        return {
            "pairs": size["train_pairs"],
            "tgt_words": size["train_tgt_words"],
            **vocab,
            "source": f"data.tasks.{task}.size: {size['source']}",
        }
    stated = stated_pairs(config, task)
    if stated is None:
        raise no_size(config, task, data_root)
    pairs, source = stated
    return {"pairs": pairs, "tgt_words": None, **vocab, "source": source}


def _prep_path(data_root: str | Path | None, task: str) -> Path | None:
    return Path(data_root) / task / "prepared" / "prep.json" if data_root is not None else None


def no_size(config: dict, task: str, data_root: str | Path | None) -> cfg.ConfigError:
    prep_path = _prep_path(data_root, task)
    where = f" ({prep_path} does not exist)" if prep_path is not None else ""
    return cfg.ConfigError(
        f"preset {config['preset']!r}, task {task}: no training-data size to estimate from{where}. Prepare the data "
        f"first (snakemake --cores all data/{config['preset']}/{task}/prepared/prep.json "
        f"--config preset={config['preset']}) or give "
        f"data.tasks.{task}.size (train_pairs, train_tgt_words, source)"
    )


def stated_pairs(config: dict, task: str) -> tuple[int, str] | None:
    """The training sentences a task's corpus is stated to have before anything is fetched, and where that is said:
    a synthetic corpus' `n_train`, or the `lines` the registry (nmt/data/corpora.yaml) gives its training target
    file; at most the task's `max_train`. None where neither says."""
    spec = cfg.corpus_for_task(config, task)
    if spec["corpus"] == "synth":
        pairs = spec.get("n_train")
        source = f"data.tasks.{task}.n_train: {pairs} (synthetic)"
    else:
        corpus, _, tgt_file = split_sources(spec)["train"]
        registry = load_registry()
        entry = registry[corpus].files.get(tgt_file) if corpus in registry else None
        pairs = entry.lines if entry else None
        source = f"{corpus} {tgt_file}: {pairs:,} lines (nmt/data/corpora.yaml)" if pairs else ""
    if not pairs:
        return None
    if spec.get("max_train") and spec["max_train"] < pairs:
        pairs, source = spec["max_train"], f"data.tasks.{task}.max_train: {spec['max_train']}"
    return pairs, source


def cost_key(resolved: dict, size: dict) -> str:
    """Systems with the same key cost the same per update. Keys added to `model` later count only when they differ
    from their default (nmt.settings.comparable_settings), so throughput files measured before stay valid."""
    comparable = comparable_settings(resolved)
    model = {k: v for k, v in comparable["model"].items() if k not in _COST_FREE_MODEL_KEYS}
    train = comparable["train"]
    key = {
        "model": model,
        "batch_size": train["batch_size"],
        "optimizer": train["optimizer"],
        "vocab": [size["src_vocab"], size["tgt_vocab"]],
    }
    key.update({k: train[k] for k in ("batch_tokens", "engine", "precision") if k in train})  # when not the default
    return cfg.fingerprint(key)


def preset_systems(
    config: dict,
    root: str | Path,
    data_root: str | Path | None,
    only: list[str] | None = None,
    train_overrides: dict | None = None,
) -> list[dict]:
    """Every system the preset trains (or only those named), with its epochs, training size and cost key; its `train`
    settings with `train_overrides` (e.g. `nmt bench train --precision`) over whatever the tables and recipes say."""
    out = []
    for task, systems in plan.collect_systems(config, root).items():
        systems = {name: path for name, path in systems.items() if not only or name in only}
        if not systems:
            continue
        size = training_size(config, task, data_root)
        for system, table_path in systems.items():
            table = cfg.load_table(Path(root) / table_path)
            resolved = cfg.system_config(config, table, system, table_path)
            resolved["train"].update(train_overrides or {})
            epochs = SystemSettings.from_config(resolved).schedule.epochs
            out.append(
                {
                    "task": task,
                    "system": system,
                    "table": Path(table_path).stem,
                    "epochs": epochs,
                    "size": size,
                    "resolved": resolved,
                    "key": cost_key(resolved, size),
                }
            )
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
    blas = ", MKL's Intel code paths (nmt.engine.mkl_on_amd)" if mkl_on_amd.active() else ""
    return f"CPU {cpu}, {torch.get_num_threads()} thread(s){blas}"


def measure_throughput(
    model_cfg: dict,
    train: TrainSettings,
    src_vocab: int,
    tgt_vocab: int,
    length: int,
    *,
    updates: int,
    warmup: int,
    device: torch.device,
    seed: int = 1,
    compare_eager: bool = False,
) -> dict:
    """Time training updates (nmt.engine.train_step.TrainingStep: forward, backward, clipping, optimiser step, as `nmt
    train` makes them, in the precision it would choose: nmt.engine.cpu_precision) on random batches of `batch_size`
    sentences of `length` words a side on average (nmt.engine.update_timing.random_batch): at least `updates` timed ones
    after `warmup` untimed ones. The batch size is train.batch_size, or with train.batch_tokens as many sentences as
    fit. With `compare_eager` the plain eager fp32 path (engine eager, precision fp32) is timed in the same run, one
    update of each in turn (nmt.engine.update_timing), so that both see the same machine."""
    precision, why = cpu_precision.resolve(model_cfg, train, src_vocab, tgt_vocab, length, device)
    paths = {"fast": {"precision": precision}}
    if compare_eager:
        paths["eager"] = {"engine": "eager", "precision": "fp32"}
    timed, steps, batch_size = time_updates(
        model_cfg,
        train,
        src_vocab,
        tgt_vocab,
        length,
        paths=paths,
        updates=updates,
        warmup=warmup,
        device=device,
        seed=seed,
    )
    tokens = batch_size * length  # target words per update (every position a real word)
    seconds, calls = timed["fast"]
    result = {
        "updates": calls,
        "batch_sentences": batch_size,
        "seconds_per_update": seconds / 1000,
        "tokens_per_s": tokens / (seconds / 1000),
        "engine": steps["fast"].engine,
        "precision": "fp32" if steps["fast"].dtype is None else "bf16",
    }
    if why:
        result["precision_choice"] = why
    result["tgt_tokens_per_s"] = result["tokens_per_s"]  # the name older throughput files use
    if compare_eager:
        eager_ms, _ = timed["eager"]
        result.update(
            eager_seconds_per_update=eager_ms / 1000,
            eager_tokens_per_s=tokens / (eager_ms / 1000),
            speedup=eager_ms / seconds,
        )
    return result


def epoch_check(
    config: dict,
    root: str | Path,
    table_path: str,
    system: str,
    data_dir: Path,
    *,
    device: torch.device,
    threads: int | None,
    seeds: list[int] | None = None,
    train_overrides: dict | None = None,
    progress=print,
) -> dict:
    """Train `system` for one epoch on its prepared data (`nmt train`, real batches) with the preset's engine and
    precision and again with the plain eager fp32 path, from the same initialisation, once per seed (default: the
    preset's): dev perplexity and throughput of both. What --epoch-check adds to `nmt bench train`: the fast path's
    numbers are the plain path's.

    The two paths draw their dropout masks from different generators (nmt.models.dropout), so with dropout one
    seed's pair differs by the training noise as well as by the engine; several seeds give that noise's size
    (`dev_ppl_spread`, the largest relative gap between two seeds of one path) and a ratio of means that averages
    it out (`dev_ppl_ratio`)."""
    table = cfg.load_table(Path(root) / table_path)
    resolved = cfg.system_config(config, table, system, table_path)
    resolved["train"].update(train_overrides or {})
    seeds = list(seeds or [resolved["train"]["seed"]])
    runs: dict[str, list[dict]] = {"fast": [], "eager": []}
    with tempfile.TemporaryDirectory(prefix="nmt-epoch-check-") as tmp:
        for seed in seeds:
            for name, overrides in (("fast", {}), ("eager", {"engine": "eager", "precision": "fp32"})):
                run = {
                    **resolved,
                    "train": {
                        **resolved["train"],
                        "epochs": 1,
                        "halve_after": 1,
                        "seed": seed,
                        "dropout_schedule": {"epochs": 1, "halve_after": 1},
                        "plateau": None,
                        **overrides,
                    },
                }
                progress(f"epoch check {system}: one epoch with the {name} path, seed {seed}")
                record = train(
                    run,
                    data_dir,
                    Path(tmp) / f"{name}-{seed}",
                    system=system,
                    threads=threads,
                    device=str(device),
                    progress=False,
                )[-1]
                runs[name].append(
                    {
                        "seed": seed,
                        "dev_ppl": record["dev_ppl"],
                        "tokens_per_s": record["tgt_tokens_per_s"],
                        "elapsed_s": record["elapsed_s"],
                    }
                )
    out: dict = {"seeds": seeds}
    for name, per_seed in runs.items():
        ppls = [run["dev_ppl"] for run in per_seed]
        out[name] = {
            "dev_ppl": statistics.fmean(ppls),
            "tokens_per_s": statistics.fmean(run["tokens_per_s"] for run in per_seed),
            "elapsed_s": sum(run["elapsed_s"] for run in per_seed),
            "dev_ppl_spread": max(ppls) / min(ppls) - 1,
            "runs": per_seed,
        }
    out["dev_ppl_ratio"] = out["fast"]["dev_ppl"] / out["eager"]["dev_ppl"]
    out["speedup"] = out["fast"]["tokens_per_s"] / out["eager"]["tokens_per_s"]
    return out


def bench_train(
    config: dict,
    root: str | Path,
    data_root: str | Path | None,
    *,
    updates: int,
    warmup: int,
    device: torch.device,
    compare_eager: bool = False,
    systems: list[str] | None = None,
    epoch_check_systems: list[str] | None = None,
    epoch_check_seeds: list[int] | None = None,
    threads: int | None = None,
    precision: str | None = None,
    progress=print,
) -> dict:
    """Measure each distinct cost of the preset once (only `systems`, when given); the result is what `nmt estimate`
    reads. `epoch_check_systems` also train one real epoch each, once per seed of `epoch_check_seeds` (epoch_check).
    `precision` replaces every system's train.precision (the fast path's; the eager path is fp32 always)."""
    overrides = {"precision": precision} if precision else {}
    if systems:
        known = {name for found in plan.collect_systems(config, root).values() for name in found}
        unknown = sorted(set(systems) - known)
        if unknown:
            raise cfg.ConfigError(
                f"--systems: {', '.join(unknown)}: not a system of preset {config['preset']!r} (nmt systems lists them)"
            )
    entries = preset_systems(config, root, data_root, systems, overrides)
    measured: dict[str, dict] = {}
    for entry in entries:
        if entry["key"] in measured:
            measured[entry["key"]]["systems"].append(f"{entry['task']}/{entry['system']}")
            continue
        size, resolved = entry["size"], entry["resolved"]
        if size["tgt_words"] is None:  # a sentence count alone: the batches' length must be the corpus' own
            raise no_size(config, entry["task"], data_root)
        length = max(1, round(size["tgt_words"] / max(size["pairs"], 1)))
        progress(
            f"measuring {entry['task']}/{entry['system']}: {resolved['model']['layers']}x"
            f"{resolved['model']['hidden']}, vocab {size['src_vocab']}/{size['tgt_vocab']}, batch "
            f"{resolved['train']['batch_size']}, length {length}, {updates} updates"
        )
        result = measure_throughput(
            resolved["model"],
            TrainSettings.from_dict(resolved["train"]),
            size["src_vocab"],
            size["tgt_vocab"],
            length,
            updates=updates,
            warmup=warmup,
            device=device,
            compare_eager=compare_eager,
        )
        line = f"  {result['tokens_per_s']:.0f} target tokens/s ({result['seconds_per_update']:.3f} s/update)"
        if compare_eager:
            line += f"; eager fp32 {result['eager_tokens_per_s']:.0f}: {result['speedup']:.2f}x"
        progress(line)
        measured[entry["key"]] = {"systems": [f"{entry['task']}/{entry['system']}"], "length": length, **result}
    checks = {}
    tables = plan.collect_systems(config, root)
    for name in epoch_check_systems or []:
        task = next((t for t, found in tables.items() if name in found), None)
        if task is None:
            raise cfg.ConfigError(f"--epoch-check: {name}: not a system of preset {config['preset']!r}")
        data_dir = Path(data_root) / task / "prepared" if data_root is not None else None
        if data_dir is None or not (data_dir / "train.pt").is_file():
            raise cfg.ConfigError(
                f"--epoch-check {name}: no prepared data in {data_dir} (prepare it first: "
                f"snakemake --cores all data/{config['preset']}/{task}/prepared/prep.json "
                f"--config preset={config['preset']})"
            )
        checks[f"{task}/{name}"] = epoch_check(
            config,
            root,
            tables[task][name],
            name,
            data_dir,
            device=device,
            threads=threads,
            seeds=epoch_check_seeds,
            train_overrides=overrides,
            progress=progress,
        )
        check = checks[f"{task}/{name}"]
        over = f"mean of {len(check['seeds'])} seeds, " if len(check["seeds"]) > 1 else ""
        progress(
            f"  dev ppl after one epoch ({over}fast/eager): {check['fast']['dev_ppl']:.3f} / "
            f"{check['eager']['dev_ppl']:.3f}, ratio {check['dev_ppl_ratio']:.4f} (between seeds: fast "
            f"{100 * check['fast']['dev_ppl_spread']:.1f}%, eager {100 * check['eager']['dev_ppl_spread']:.1f}%); "
            f"{check['fast']['tokens_per_s']:.0f} vs {check['eager']['tokens_per_s']:.0f} target tokens/s "
            f"({check['speedup']:.2f}x)"
        )
    result = {
        "preset": config["preset"],
        "device": device_description(device),
        "device_type": device.type,
        "torch": torch.__version__,
        "date": datetime.date.today().isoformat(),
        "compare_eager": compare_eager,
        "measurements": measured,
    }
    if checks:
        result["epoch_checks"] = checks
    return result


def committed_throughput(preset: str, root: str | Path) -> Path:
    """The preset's committed throughput file for this machine's kind of device (nmt.records.benchmarks:
    benchmarks/throughput-PRESET-cuda.json where torch sees a GPU, -cpu.json where not): `nmt estimate`'s default;
    ConfigError saying what to do where there is none. Said on stderr: the estimate's figures are that file's."""
    root = Path(root)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    relative = throughput_path(preset, device)
    if not (root / relative).is_file():
        others = sorted(p.name for p in root.glob(throughput_path(preset, "*")))
        raise cfg.ConfigError(
            f"preset {preset!r}: no {relative} (the {device.upper()} measurement this machine "
            f"would use){': there is ' + ', '.join(others) if others else ''}; give one with "
            f"--throughput, or measure one with `nmt bench train --preset {preset}`"
        )
    print(f"nmt: throughput from {relative} (--throughput gives another)", file=sys.stderr)
    return root / relative


def estimate(config: dict, root: str | Path, data_root: str | Path | None, bench: dict) -> dict:
    """Hours per system, per table (the table that trains it) and in total, from a `bench_train` result for the same
    preset. A system whose cost was not measured (`nmt bench train --systems` left it out, or its model or data size
    changed since) has hours None and is counted apart: no total includes a figure that was not measured."""
    if bench.get("preset") != config["preset"]:
        raise cfg.ConfigError(
            f"the throughput file was measured for preset {bench.get('preset')!r}, not {config['preset']!r}"
        )
    rows = []
    for entry in preset_systems(config, root, data_root):
        measured = bench["measurements"].get(entry["key"])
        size = entry["size"]
        words, source = size["tgt_words"], size["source"]
        if words is None and measured is not None and measured.get("length"):
            # only the sentences are stated: their mean length is the one the throughput was measured at
            words = size["pairs"] * measured["length"]
            source += " x the mean sentence length the throughput was measured at"
        tokens = None if words is None else words + size["pairs"]  # + one </s> per sentence, as training counts
        per_s = None if measured is None else measured.get("tokens_per_s", measured.get("tgt_tokens_per_s"))
        hours = None if per_s is None or tokens is None else entry["epochs"] * tokens / per_s / 3600
        rows.append(
            {
                "task": entry["task"],
                "system": entry["system"],
                "table": entry["table"],
                "epochs": entry["epochs"],
                "train_pairs": size["pairs"],
                "tgt_tokens_per_epoch": tokens,
                "tgt_tokens_per_s": per_s,
                "hours": hours,
                "size_source": source,
            }
        )
    if rows and all(r["hours"] is None for r in rows):
        raise cfg.ConfigError(
            f"no system of preset {config['preset']!r} has a measurement in the throughput file: "
            f"their models or data sizes changed since the throughput was measured; run "
            f"`nmt bench train --preset {config['preset']}` again"
        )
    tables: dict[str, dict] = {}
    for r in rows:
        table = tables.setdefault(r["table"], {"table": r["table"], "runs": 0, "measured": 0, "hours": 0.0})
        table["runs"] += 1
        if r["hours"] is not None:
            table["measured"] += 1
            table["hours"] += r["hours"]
    measured = [r for r in rows if r["hours"] is not None]
    return {
        "preset": config["preset"],
        "device": bench["device"],
        "device_type": bench["device_type"],
        "measured_on": bench["date"],
        "torch": bench["torch"],
        "systems": len(rows),
        "measured_systems": len(measured),
        "total_hours": sum(r["hours"] for r in measured),
        "tables": list(tables.values()),
        "rows": rows,
    }


def claim_costs(result: dict, claims_doc: dict) -> dict:
    """What deciding the inconclusive claims would cost: for every claim of a report's claims file that says how many
    seeds would detect the paper's difference (``seeds_needed``, nmt.report.claims), the device-hours of training
    each system it rests on (its ``trained``) that many times, and of the runs beyond the seeds already trained; and
    for the whole preset, every system trained with the most seeds any claim needs. From the same measured hours per
    run as the estimate (an upper bound under ``train.plateau``); None where a system was not measured. Each claim
    keeps the range of its seeds (``seeds_needed_range``: at the 10th and 90th percentiles of the seed variance, None
    without one) and, for a claim resting on a single run, the assumed spread between seeds its figure rests on
    (``assumed_seed_ratio``: an assumption, not a measurement)."""
    if claims_doc.get("preset") != result["preset"]:
        raise cfg.ConfigError(f"the claims file is preset {claims_doc.get('preset')!r}'s, not {result['preset']!r}'s")
    hours = {(r["task"], r["system"]): r["hours"] for r in result["rows"]}
    out = []
    for claim in claims_doc.get("claims") or []:
        needed = claim.get("seeds_needed")
        if not needed:
            continue
        systems = sorted({(t["pair"], t["system"]) for t in claim.get("trained") or []})
        foreign = [f"{pair}/{system}" for pair, system in systems if (pair, system) not in hours]
        if foreign:  # not a system left unmeasured: one this preset never trains, so another run's claims file
            raise cfg.ConfigError(
                f"the claims file's claim {claim['id']} rests on {', '.join(foreign)}, which preset "
                f"{result['preset']!r} does not train: the claims file is another run's"
            )
        per_run = [hours.get(key) for key in systems]
        trained = max((claim.get("n_runs") or {}).values(), default=1)
        known = bool(systems) and all(h is not None for h in per_run)
        per_seed = sum(per_run) if known else None
        out.append(
            {
                "id": claim["id"],
                "seeds_needed": needed,
                "seeds_needed_range": claim.get("seeds_needed_range"),
                "assumed_seed_ratio": claim.get("assumed_seed_ratio"),
                "seeds_trained": trained,
                "systems": len(systems),
                "hours_per_seed": per_seed,
                "hours": None if per_seed is None else needed * per_seed,
                "extra_hours": None if per_seed is None else max(0, needed - trained) * per_seed,
                "not_measured": [f"{pair}/{system}" for (pair, system), h in zip(systems, per_run) if h is None],
            }
        )
    most = max((c["seeds_needed"] for c in out), default=None)
    every = (
        None
        if most is None or result["measured_systems"] < result["systems"]
        else most * sum(r["hours"] for r in result["rows"] if not cfg.SEED_RUN.match(r["system"]))
    )
    return {"claims": out, "most_seeds": most, "preset_hours_at_most_seeds": every}


def format_claim_costs(costs: dict, unit: str) -> str:
    if not costs["claims"]:
        return f"no claim of the report names a number of seeds that would decide it ({CLAIMS_NAME}: seeds_needed)"
    lines = [
        f"{'claim':<44} {'seeds':>6} {'trained':>8} {'systems':>8} {unit + ' in all':>16} {'beyond':>10}  "
        f"seeds' range (10th-90th percentile of the seed variance)"
    ]
    assumed = set()
    for c in costs["claims"]:
        hours = "not measured" if c["hours"] is None else f"{c['hours']:.3g}"
        extra = "-" if c["extra_hours"] is None else f"{c['extra_hours']:.3g}"
        spread = seeds_range_text(c.get("seeds_needed_range")) or "-"
        if c.get("assumed_seed_ratio") is not None:
            spread = f"assumed (single run, ratio {c['assumed_seed_ratio']:g})"
            assumed.add(c["assumed_seed_ratio"])
        lines.append(
            f"{c['id']:<44} {c['seeds_needed']:>6} {c['seeds_trained']:>8} {c['systems']:>8} {hours:>16} "
            f"{extra:>10}  {spread}"
        )
    if assumed:
        lines.append(
            "assumed: a claim resting on a single run measures no spread between seeds; its seeds assume one "
            "run's difference varies between seeds that many times as much as between test sets "
            "(verdicts.assumed_seed_ratio), an assumption, not a measurement"
        )
    if costs["preset_hours_at_most_seeds"] is not None:
        lines.append(
            f"every system of the preset with {costs['most_seeds']} seeds: "
            f"{costs['preset_hours_at_most_seeds']:.3g} {unit}"
        )
    return "\n".join(lines)


def format_estimate(result: dict) -> str:
    unit = "GPU-hours" if result["device_type"] == "cuda" else "CPU-hours"
    missing = result["systems"] - result["measured_systems"]
    total = f"{result['total_hours']:.3g} {unit}"
    whole = (
        f"{total} in all"
        if not missing
        else f"{total} for the {result['measured_systems']} measured, {missing} not measured"
    )
    lines = [
        f"preset {result['preset']}: {result['systems']} systems to train, {whole} (one job at a time on one device)",
        f"throughput measured by `nmt bench train` on {result['device']}, {result['measured_on']}, "
        f"torch {result['torch']}",
        "",
        f"{'table':<44} {'runs':>6} {'measured':>9} {unit:>10}",
    ]
    for t in result["tables"]:
        hours = "not measured" if not t["measured"] else f"{t['hours']:>10.3g}"
        lines.append(
            f"{t['table']:<44} {t['runs']:>6} {t['measured']:>9} {hours:>10}"
            + ("" if t["measured"] in (0, t["runs"]) else "  (measured runs only)")
        )
    lines += ["", f"{'task/system':<44} {'epochs':>6} {'pairs':>10} {'tokens/epoch':>13} {'tok/s':>8} {unit:>10}"]
    for r in result["rows"]:
        speed = "-" if r["tgt_tokens_per_s"] is None else f"{r['tgt_tokens_per_s']:.0f}"
        tokens = "-" if r["tgt_tokens_per_epoch"] is None else f"{r['tgt_tokens_per_epoch']:,}"
        hours = "not measured" if r["hours"] is None else f"{r['hours']:.3g}"
        lines.append(
            f"{r['task'] + '/' + r['system']:<44} {r['epochs']:>6} {r['train_pairs']:>10,} "
            f"{tokens:>13} {speed:>8} {hours:>10}"
        )
    sources = sorted({r["size_source"] for r in result["rows"]})
    lines += [
        "",
        "training sizes from: " + "; ".join(sources),
        "not included: decoding and scoring (minutes), data download and preparation",
    ]
    return "\n".join(lines)
