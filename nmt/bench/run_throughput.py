"""A whole run's training throughput: the target tokens its trainings have trained on, read from their metrics files
(each finished epoch's ``tgt_tokens_per_s`` times its ``elapsed_s``), and the training processes' seconds. Taken
before and after a stretch of a run (benchmarks/reference-gpu.sh: one Snakemake call on a GPU shared by many
trainings), the difference over that stretch's wall time is the aggregate tokens/s of every training at once, the
figure by which sharing one GPU between small models is judged.
Details: docs/internals/bench.md."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ..base.errors import UserError
from ..base.files import read_json
from ..records.metrics import metrics_files, read_epochs

_TOTALS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["trainings", "epochs", "tokens", "training_s"],
    "properties": {key: {"type": "number", "minimum": 0} for key in ("trainings", "epochs", "tokens", "training_s")},
}


@dataclass(frozen=True)
class Trained:
    """What a run's trainings have done so far: finished epochs, the target tokens trained on in them, and the
    seconds of training they took (evaluation and start-up not counted)."""

    trainings: int = 0
    epochs: int = 0
    tokens: float = 0.0
    training_s: float = 0.0


def trained(results: str | Path) -> Trained:
    """The totals over every training's metrics file under ``results`` (results/PRESET); epochs recorded without
    ``tgt_tokens_per_s`` or ``elapsed_s`` add nothing but their count."""
    trainings = epochs = 0
    tokens = seconds = 0.0
    for path in metrics_files(results):
        records = read_epochs(path, allow_empty=True)
        trainings += bool(records)
        for record in records:
            epochs += 1
            if "tgt_tokens_per_s" in record and "elapsed_s" in record:
                tokens += record["tgt_tokens_per_s"] * record["elapsed_s"]
                seconds += record["elapsed_s"]
    return Trained(trainings, epochs, tokens, seconds)


def stretch_line(before: Trained, after: Trained, wall_s: float) -> str:
    """One line: what the trainings did in ``wall_s`` seconds of a run, and the aggregate target tokens/s."""
    tokens, seconds = after.tokens - before.tokens, after.training_s - before.training_s
    rate = f"{tokens / wall_s:,.0f}" if wall_s > 0 else "-"
    return (
        f"trained: {after.epochs - before.epochs} epochs, {tokens:,.0f} target tokens in {wall_s:,.0f} s of wall "
        f"time: {rate} target tokens/s aggregate; {seconds:,.0f} s of training in all (on average "
        f"{seconds / wall_s if wall_s > 0 else 0:.1f} trainings at once); {after.trainings} trainings with an epoch"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nmt.bench.run_throughput", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="the run's results directory (results/PRESET)")
    parser.add_argument("--since", help="the JSON this printed before the stretch; with --seconds: one line")
    parser.add_argument("--seconds", type=float, help="the stretch's wall time")
    args = parser.parse_args(argv)
    try:
        now = trained(args.results)
        if args.since is None:
            print(json.dumps(asdict(now)))
            return 0
        if args.seconds is None:
            parser.error("--since needs --seconds")
        before = Trained(**read_json(args.since, "the totals before the stretch", schema=_TOTALS_SCHEMA))
        print(stretch_line(before, now, args.seconds))
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
