"""How often the convergence gate passes a training the stopping rule stopped (docs/statistics.md, "The convergence
gate"): the two must not contradict each other by design.

For every training found, one line: its epochs, what ended it (the plateau rule, replayed on its dev perplexities
under the plateau its model.json records, a plateau without `patience` meaning 1 as nmt.settings reads it;
max_epochs; a fixed schedule), the last epoch's improvement, the gate's projected remaining gain with the epochs its
line went through, and the gate's verdict (nmt.settings.schedule.convergence at params.yaml's verdicts unless
--within/--window say otherwise); then "N of M stopped by the rule pass".

Run from the repository root, on results directories (searched for */models/*/metrics.jsonl, as results/PRESET or a
reproduction's results/) or metrics.jsonl files:

    python benchmarks/gate-agreement.py docs/reproductions/small-gpu/results
    python benchmarks/gate-agreement.py results/demo
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nmt import settings
from nmt.settings import VerdictSettings
from nmt.settings.schedule import Schedule, convergence, final_rate_stalls

# the reduced presets' plateau, for a metrics.jsonl without a model.json beside it
PRESETS_PLATEAU = {"within": 0.01, "halvings": 2, "patience": 2, "max_epochs": 20}


def metrics_files(paths: list[str]) -> list[Path]:
    found = []
    for path in map(Path, paths):
        found += [path] if path.is_file() else sorted(path.glob("*/models/*/metrics.jsonl"))
    return found


def ended_by(metrics: list[dict], meta: dict | None) -> str:
    """What ended a training: "rule" (the plateau rule's stalls), "max_epochs", "fixed" (the fixed schedule's epoch
    count) or "unfinished" (none of them: the run was cut short)."""
    plateau = PRESETS_PLATEAU if meta is None else meta.get("plateau")
    if plateau is None and meta is not None:
        plateau = (meta.get("config") or {}).get("train", {}).get("plateau")
    if plateau is None:
        return "fixed"
    plateau = settings.upgrade_value("train", "plateau", plateau)
    ppls = [m["dev_ppl"] for m in metrics]
    if final_rate_stalls(ppls, plateau["within"], plateau["halvings"]) >= plateau["patience"]:
        return f"rule (patience {plateau['patience']})"
    schedule = Schedule(epochs=plateau["max_epochs"], plateau=plateau)
    return "max_epochs" if len(metrics) >= schedule.epochs else "unfinished"


def main() -> None:
    defaults = VerdictSettings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="results directories or metrics.jsonl files")
    parser.add_argument("--within", type=float, default=defaults.converged_within)
    parser.add_argument("--window", type=int, default=defaults.converged_window)
    args = parser.parse_args()
    files = metrics_files(args.paths)
    if not files:
        raise SystemExit(f"no */models/*/metrics.jsonl under {', '.join(args.paths)}")
    stopped = passed = 0
    print(f"gate: verdicts.converged_within {args.within:g}, converged_window {args.window}")
    print(f"{'training':44s} {'epochs':>6}  {'ended by':16s} {'last epoch':>10}  {'projected left':32s} gate")
    for path in files:
        metrics = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        meta_file = path.parent / "model.json"
        meta = json.loads(meta_file.read_text()) if meta_file.is_file() else None
        gate = convergence(metrics, args.within, args.window)
        end = ended_by(metrics, meta)
        if end.startswith("rule"):
            stopped += 1
            passed += gate["converged"]
        last = "-" if gate["last_improvement"] is None else f"{100 * gate['last_improvement']:+.2f}%"
        left = (
            "- (too few evaluations)"
            if gate["projected_left"] is None
            else f"{100 * gate['projected_left']:.2f}% (epochs {gate['fit_from']}-{gate['epochs']}, "
            f"{100 * gate['slope']:+.2f}%/ep)"
        )
        name = f"{path.parent.parent.parent.name}/{path.parent.name}"
        print(
            f"{name:44s} {gate['epochs']:6d}  {end:16s} {last:>10}  {left:32s} "
            f"{'pass' if gate['converged'] else 'FAIL'}"
        )
    print(f"{passed} of {stopped} stopped by the rule pass the gate ({len(files)} trainings)")


if __name__ == "__main__":
    main()
