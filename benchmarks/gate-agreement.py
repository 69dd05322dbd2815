"""How often the convergence gate passes a training the stopping rule stopped (docs/statistics.md, "The convergence
gate"), and what the rule that stops by the gate (train.plateau stop: gate) would have done with a record made by
another rule.

For every training found, one line: its epochs, what ended it (the plateau rule, replayed on its dev perplexities
under the plateau its model.json records: stop: gate, or stalls, a plateau without `stop` stopping by stalls and
one without `patience` at the first, as nmt.settings reads them; max_epochs; a fixed schedule), the last epoch's
improvement, the gate's projected remaining gain with the epochs its line went through, the gate's verdict
(nmt.settings.schedule.convergence at params.yaml's verdicts unless --within/--window say otherwise), and where
stop: gate with the record's `within` and `halvings` stops on the same dev perplexities ("past the record": it
would have trained on); then "N of M stopped by the rule pass" and the epochs stop: gate takes.

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
from nmt.settings.schedule import Schedule, convergence, final_rate_stalls, patience_of, stop_of, wants_epoch

# the reduced presets' plateau, for a metrics.jsonl without a model.json beside it
PRESETS_PLATEAU = {"within": 0.01, "halvings": 2, "stop": "gate", "max_epochs": 30}


def metrics_files(paths: list[str]) -> list[Path]:
    found = []
    for path in map(Path, paths):
        found += [path] if path.is_file() else sorted(path.glob("*/models/*/metrics.jsonl"))
    return found


def plateau_of(meta: dict | None) -> dict | None:
    plateau = PRESETS_PLATEAU if meta is None else meta.get("plateau")
    if plateau is None and meta is not None:
        plateau = (meta.get("config") or {}).get("train", {}).get("plateau")
    return None if plateau is None else settings.upgrade_value("train", "plateau", plateau)


def gate_rule(plateau: dict | None, within: float, window: int, max_epochs: int) -> Schedule:
    """The rule that stops by the gate, with a record's own stall threshold and halvings where it has them."""
    base = plateau or PRESETS_PLATEAU
    rule = {"within": base["within"], "halvings": base["halvings"], "stop": "gate", "max_epochs": max_epochs}
    return Schedule(epochs=max_epochs, plateau=rule, gate={"within": within, "window": window})


def ended_by(metrics: list[dict], plateau: dict | None, gate: Schedule) -> str:
    """What ended a training: "rule" (the plateau rule: its gate, or its stalls), "max_epochs", "fixed" (the fixed
    schedule's epoch count) or "unfinished" (none of them: the run was cut short)."""
    if plateau is None:
        return "fixed"
    if len(metrics) >= plateau["max_epochs"]:
        return "max_epochs"
    if stop_of(plateau) == "gate":
        return "rule (gate)" if not wants_epoch(len(metrics) + 1, gate, metrics) else "unfinished"
    ppls = [m["dev_ppl"] for m in metrics]
    if final_rate_stalls(ppls, plateau["within"], plateau["halvings"]) >= patience_of(plateau):
        return f"rule (patience {patience_of(plateau)})"
    return "unfinished"


def gate_stop(metrics: list[dict], gate: Schedule) -> int | None:
    """The epoch stop: gate ends this record at (its last epoch at max_epochs), None past the record."""
    for epoch in range(1, len(metrics) + 1):
        if not wants_epoch(epoch + 1, gate, metrics[:epoch]):
            return epoch
    return None


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
    stopped = passed = past = recorded = by_gate = 0
    print(f"gate: verdicts.converged_within {args.within:g}, converged_window {args.window}")
    print(
        f"{'training':44s} {'epochs':>6}  {'ended by':16s} {'last epoch':>10}  {'projected left':32s} gate  stop: gate"
    )
    for path in files:
        metrics = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        meta_file = path.parent / "model.json"
        meta = json.loads(meta_file.read_text()) if meta_file.is_file() else None
        gate = convergence(metrics, args.within, args.window)
        plateau = plateau_of(meta)
        rule = gate_rule(plateau, args.within, args.window, (plateau or PRESETS_PLATEAU)["max_epochs"])
        end = ended_by(metrics, plateau, rule)
        at = gate_stop(metrics, rule)
        recorded += len(metrics)
        by_gate += len(metrics) if at is None else at
        past += at is None
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
            f"{'pass' if gate['converged'] else 'FAIL'}  {'past the record' if at is None else f'epoch {at}'}"
        )
    print(f"{passed} of {stopped} stopped by the rule pass the gate ({len(files)} trainings)")
    print(
        f"stop: gate ends {len(files) - past} of {len(files)} within their records, {past} past them: at least "
        f"{by_gate} epochs where {recorded} were recorded"
    )


if __name__ == "__main__":
    main()
