"""`nmt bench train|translate|attention|monotonic` and `nmt estimate`: this code's speed, and what it makes a preset
cost (their options: nmt.cli.parser). Each command imports the modules that do its work when it runs."""

from __future__ import annotations

import sys
from pathlib import Path

from ..base import layout
from ..base.atomic import write_json_atomic
from ..records import benchmarks
from ..records.report_files import CLAIMS_NAME
from .arguments import load_config


def _data_root(args, config: dict) -> Path:
    return Path(args.data or layout.path(layout.DATA_ROOT, preset=config["preset"]))


def cmd_bench_train(args) -> None:
    from ..base.devices import pick_device, set_threads
    from ..bench.estimate import bench_train

    config = load_config(args)
    set_threads(args.threads)
    result = bench_train(
        config,
        Path(args.params).parent,
        _data_root(args, config),
        updates=args.updates,
        warmup=args.warmup,
        device=pick_device(args.device),
        compare_eager=args.compare_eager,
        systems=args.systems,
        epoch_check_systems=args.epoch_check,
        epoch_check_seeds=args.epoch_check_seeds,
        threads=args.threads,
        precision=args.precision,
        progress=lambda m: print(m, file=sys.stderr),
    )
    out = Path(args.out or benchmarks.throughput_path(config["preset"], result["device_type"]))
    benchmarks.write_measurement(out, result)
    print(out)


def cmd_bench_translate(args) -> None:
    from ..base.devices import pick_device, set_threads
    from ..bench.translation_speed import bench_translate

    config = load_config(args)
    set_threads(args.threads)
    result = bench_translate(
        config,
        Path(args.params).parent,
        _data_root(args, config),
        device=pick_device(args.device),
        beam=args.beam,
        compare_eager=args.compare_eager,
        systems=args.systems,
        min_time=args.min_time,
        progress=lambda m: print(m, file=sys.stderr),
    )
    out = Path(args.out or benchmarks.translation_speed_path(config["preset"], result["device_type"]))
    benchmarks.write_measurement(out, result)
    print(out)


def cmd_bench_attention(args) -> None:
    from ..base.devices import pick_device, set_threads
    from ..bench.attention_speed import bench_attention

    config = load_config(args)
    options = dict(config["bench"]["attention"])
    if args.lengths:
        options["lengths"] = args.lengths
    set_threads(args.threads)
    result = bench_attention(**options, device=pick_device(args.device), progress=lambda m: print(m, file=sys.stderr))
    benchmarks.write_measurement(args.out, result)
    print(args.out)


def cmd_bench_monotonic(args) -> None:
    from ..base.devices import set_threads
    from ..bench.monotonic_speed import bench_monotonic

    config = load_config(args)
    set_threads(args.threads)
    result = bench_monotonic(
        **config["bench"]["monotonic"],
        base_model=config["model"],
        threads=args.threads,
        progress=lambda m: print(m, file=sys.stderr),
    )
    benchmarks.write_measurement(args.out, result)
    print(args.out)


def cmd_estimate(args) -> None:
    from ..bench.estimate import claim_costs, committed_throughput, estimate, format_claim_costs, format_estimate
    from ..records.benchmarks import read_throughput
    from ..records.report_files import read_claims_file

    config = load_config(args)
    bench = read_throughput(args.throughput or committed_throughput(config["preset"], Path(args.params).parent))
    claims_doc = read_claims_file(args.claims) if args.claims else None  # both read before anything is said
    result = estimate(config, Path(args.params).parent, _data_root(args, config), bench)
    print(format_estimate(result))
    if claims_doc is not None:
        result["claim_costs"] = claim_costs(result, claims_doc)
        unit = "GPU-hours" if result["device_type"] == "cuda" else "CPU-hours"
        print(f"\nwhat the seeds that would decide the inconclusive claims cost ({CLAIMS_NAME}: seeds_needed):")
        print(format_claim_costs(result["claim_costs"], unit))
    if args.json:
        write_json_atomic(args.json, result)
