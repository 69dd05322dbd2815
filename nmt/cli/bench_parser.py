"""The grammar of `nmt bench train|translate|attention|monotonic` (their work: nmt.cli.bench_commands, imported
when one runs). Like nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from .options import THREADS_HELP, add_config_args, command, group


def register(sub) -> None:
    """`nmt bench train|translate|attention|monotonic`: measurements of this code's speed."""
    bench = group(sub, "bench", help="measurements of this code's speed", dest="bench_command")
    p = command(
        bench,
        "train",
        help="training throughput of each distinct model of the preset (for nmt estimate)",
        example="nmt bench train --preset demo --systems base --updates 5 --device cpu --out throughput-demo.json",
        handler="bench_commands:cmd_bench_train",
    )
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sizes (default: data/PRESET)")
    p.add_argument("--updates", type=int, default=20, help="timed updates per model (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (default: %(default)s)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument(
        "--compare-eager",
        action="store_true",
        help="also time the plain eager fp32 path, in turn with the fast one (eager_tokens_per_s)",
    )
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="measure only these systems (default: all)")
    p.add_argument(
        "--epoch-check",
        nargs="+",
        metavar="SYSTEM",
        default=[],
        help="also train one epoch of each on its prepared data, fast and eager fp32: dev perplexity "
        "and throughput of both",
    )
    p.add_argument(
        "--epoch-check-seeds",
        nargs="+",
        type=int,
        metavar="SEED",
        help="train each --epoch-check system once per seed, both paths (default: the preset's seed); "
        "the paths' dropout masks differ, and the seeds show how much that alone moves the result",
    )
    p.add_argument(
        "--precision",
        help="the fast path's train.precision for every system: auto, fp32 or bf16 (default: each system's own)",
    )
    p.add_argument("--out", help="JSON file (default: benchmarks/throughput-PRESET-DEVICE.json)")
    p = command(
        bench,
        "translate",
        help="decoding speed of each distinct model of the preset: greedy and beam "
        "search, sentences/s at batch 1 and 64",
        example="nmt bench translate --preset demo --systems base --min-time 0.2 --device cpu --out "
        "translate-demo.json",
        handler="bench_commands:cmd_bench_translate",
    )
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sentences (default: data/PRESET)")
    p.add_argument("--beam", type=int, help="beam size (default: the preset's translate.beam)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument(
        "--compare-eager",
        action="store_true",
        help="also time the plain path (eager engine, step-by-step reference searches), in turn",
    )
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="only these systems (default: all)")
    p.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="seconds of timed decoding per model and batch size (default: %(default)s)",
    )
    p.add_argument("--out", help="JSON file (default: benchmarks/translate-PRESET-DEVICE.json)")
    p = command(
        bench,
        "attention",
        help="time per decoder step of global vs local attention, by source length",
        example="nmt bench attention --preset demo --lengths 10 50 --out attention-speed.json",
        handler="bench_commands:cmd_bench_attention",
    )
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--lengths", type=int, nargs="+", help="source lengths (default: bench.attention.lengths)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: %(default)s)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s)")
    p = command(
        bench,
        "monotonic",
        help="softmax vs hard monotonic attention (Raffel et al. 2017, appendix F): "
        "context vectors over a T x U grid, and whole greedy decoding by length",
        example="nmt bench monotonic --preset demo --out monotonic-speed.json",
        handler="bench_commands:cmd_bench_monotonic",
    )
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--threads", type=int, default=1, help="CPU threads, torch's and numpy's (default: %(default)s)")
