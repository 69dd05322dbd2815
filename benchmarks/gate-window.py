"""The convergence gate's window, level and the rule's cap, chosen by measurement (docs/statistics.md, "The
convergence gate"): for each setting, on the families of tests/studies/test_gate_coverage.py under the rule that stops
by the gate, the largest false pass of a still-learning family (a run with 2% or more left passed), the largest false
fail of a flat or converged one (decline to a floor, a drop inside the record) and their mean epochs.

    python benchmarks/gate-window.py            # about 2 minutes on one core
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [
    str(Path(__file__).resolve().parents[1] / "tests"),
    str(Path(__file__).resolve().parents[1] / "tests/studies"),
]
import test_gate_coverage as study  # noqa: E402  (the families and the vectorised replay of the rule)

CURVES = 1000
WINDOWS, LEVELS, CAPS = (5, 8, 10, 11, 12), (0.95, 0.975), (20, 25, 30)


def measure(window: int, level: float, cap: int) -> dict:
    plateau = {**study.PLATEAU, "max_epochs": cap}
    false_pass, false_fail, epochs = {}, {}, {}
    for index, (name, truth, draw, noise) in enumerate(study.FAMILIES):
        rng = np.random.default_rng([0, index])
        f, fixed = draw(rng, CURVES, noise)
        if fixed or truth not in (study.STILL_LEARNING, study.FLAT, study.CONVERGED):
            continue
        ppls = np.exp(f + rng.normal(0.0, noise, f.shape))
        stop, passed = study.replay(ppls, plateau, window, level)
        left = np.array([study.left_after(row, e) for row, e in zip(f, stop)])
        if truth == study.STILL_LEARNING:
            false_pass[name] = float(np.mean(passed & (left >= 0.02)))
        else:
            false_fail[name] = float(np.mean(~passed))
        epochs.setdefault(truth, []).append(float(stop.mean()))
    worst_pass = max(false_pass, key=false_pass.get)
    worst_fail = max(false_fail, key=false_fail.get)
    return {
        "false pass": f"{100 * false_pass[worst_pass]:.1f}% ({worst_pass})",
        "false fail": f"{100 * false_fail[worst_fail]:.1f}% ({worst_fail})",
        "epochs": ", ".join(f"{truth} {np.mean(v):.1f}" for truth, v in epochs.items()),
    }


def main() -> None:
    print("| window | level | cap | largest false pass | largest false fail | mean epochs |")
    print("| --: | --: | --: | --- | --- | --- |")
    for window, level, cap in itertools.product(WINDOWS, LEVELS, CAPS):
        m = measure(window, level, cap)
        print(f"| {window} | {level:.1%} | {cap} | {m['false pass']} | {m['false fail']} | {m['epochs']} |", flush=True)


if __name__ == "__main__":
    main()
