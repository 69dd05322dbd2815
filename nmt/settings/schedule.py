"""How long a system trains and at which learning rate, and the gate that says whether it converged.
Details: docs/internals/settings.md."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scipy import special

HORIZON = 10  # epochs: how far ahead the convergence gate projects a training's dev perplexity
LEAST_FIT = 3  # evaluations: a line through fewer leaves no scatter to bound its slope by
# The one-sided level of the gate's bound on the slope. Above 95% because the plateau rule asks the gate after every
# epoch and stops at its first pass: over those looks a run still 2-3% from its floor must pass at most 5% of the time
# (tests/studies/test_gate_coverage.py measures both error rates; docs/statistics.md, "The convergence gate").
LEVEL = 0.975
STOPS = ("gate", "stalls")  # what ends a plateau training: the convergence gate's pass, or `patience` stalls in a row


@dataclass(frozen=True)
class Schedule:
    """A system's schedule: ``epochs`` (fixed: the epochs trained; plateau: at most), ``halve_after`` (fixed only)
    and ``plateau`` ({within, halvings, patience, max_epochs}, or None for the fixed schedule)."""

    epochs: int
    halve_after: int | None = None
    plateau: dict | None = None
    gate: dict | None = None  # {within, window}: verdicts.converged_*, which a plateau with stop: gate stops by
    source: str = field(default="", compare=False)  # the train keys it was read from

    def as_dict(self) -> dict:
        """What `nmt config` shows of a system's effective schedule: its fields and the rule in words."""
        return {**asdict(self), "rule": self.describe()}

    def describe(self) -> str:
        if self.plateau and stop_of(self.plateau) == "gate":
            return (
                f"until the convergence gate passes: the learning rate halved at each of the first "
                f"{self.plateau['halvings']} epochs that lower the best dev perplexity by at most "
                f"{self.plateau['within']:.1%}, then stopped at the first epoch whose last {self.gate['window']} "
                f"evaluations leave at most {self.gate['within']:.0%} to gain in {HORIZON} epochs (one-sided "
                f"{LEVEL:.1%}), at most {self.epochs} epochs"
            )
        if self.plateau:
            patience = patience_of(self.plateau)
            stop = (
                "stopped at the next"
                if patience == 1
                else f"stopped once {patience} epochs in a row at the final rate do so"
            )
            return (
                f"until the dev perplexity is flat: the learning rate halved at each of the first "
                f"{self.plateau['halvings']} epochs that lower it by at most {self.plateau['within']:.1%}, "
                f"{stop}, at most {self.epochs} epochs"
            )
        return f"{self.epochs} epochs, the learning rate halved every epoch after epoch {self.halve_after}"


def stop_of(plateau: dict) -> str:
    """What ends a plateau training (one of STOPS); a plateau recorded before `stop` existed ended at its stalls."""
    return plateau.get("stop", "stalls")


def patience_of(plateau: dict) -> int:
    """With stop: stalls, how many in a row end training; one recorded before `patience` existed stopped at the
    first (it is not in the setting's `within`: a plateau that stops by the gate has no patience)."""
    return plateau.get("patience", 1)


def stopping_gate(config) -> tuple[str, ...]:
    """The verdicts keys a resolved config's training stops by: the gate's, under a plateau with stop: gate."""
    plateau = config["train"].get("plateau")
    return ("converged_within", "converged_window") if plateau and stop_of(plateau) == "gate" else ()


def schedule_of(train, dropout: float, gate=None) -> Schedule:
    """The schedule a system's ``train`` settings (nmt.settings.sections.TrainSettings) ask for (``dropout``: its
    model's dropout; ``gate``: the verdicts settings whose convergence gate a plateau with stop: gate stops by)."""
    if train.plateau:
        plateau = dict(train.plateau)
        if stop_of(plateau) != "gate":
            return Schedule(epochs=plateau["max_epochs"], plateau=plateau, source="train.plateau")
        if gate is None:
            raise ValueError("a plateau with stop: gate needs the verdicts settings of its gate")
        return Schedule(
            epochs=plateau["max_epochs"],
            plateau=plateau,
            gate={"within": gate.converged_within, "window": gate.converged_window},
            source="train.plateau, verdicts.converged_within, verdicts.converged_window",
        )
    longer = train.dropout_schedule or {}
    if dropout > 0 and longer:
        fixed = {"epochs": train.epochs, "halve_after": train.halve_after, **longer}
        return Schedule(
            epochs=fixed["epochs"],
            halve_after=fixed["halve_after"],
            source="train.dropout_schedule (model.dropout > 0), over train.epochs and train.halve_after",
        )
    return Schedule(epochs=train.epochs, halve_after=train.halve_after, source="train.epochs, train.halve_after")


def unread_keys(train) -> tuple[str, ...]:
    """The ``train`` keys that schedule_of does not read for these settings: the fixed schedule's under a plateau."""
    return ("epochs", "halve_after", "dropout_schedule") if train.plateau else ()


def improvement(dev_ppls: list[float], upto: int | None = None) -> float | None:
    """How much the evaluation ``upto`` (0-based; default the last) lowered the best dev perplexity before it, as a
    fraction of that best (negative: it rose); None for the first evaluation, which has nothing before it."""
    last = len(dev_ppls) - 1 if upto is None else upto
    if last < 1:
        return None
    best_before = min(dev_ppls[:last])
    return (best_before - dev_ppls[last]) / best_before


def stalls(dev_ppls: list[float], within: float) -> int:
    """How many of the evaluations did not lower the best dev perplexity before them by more than ``within``."""
    return sum(1 for i in range(1, len(dev_ppls)) if improvement(dev_ppls, i) <= within)


def _dev_ppls(metrics: list[dict]) -> list[float]:
    return [record["dev_ppl"] for record in metrics]


def learning_rate(base_lr: float, epoch: int, schedule: Schedule, metrics: list[dict]) -> float:
    """The learning rate of 1-based ``epoch``, given the records of the epochs before it."""
    if schedule.plateau:
        return base_lr * 0.5 ** min(
            stalls(_dev_ppls(metrics[: epoch - 1]), schedule.plateau["within"]), schedule.plateau["halvings"]
        )
    return base_lr * 0.5 ** max(0, epoch - schedule.halve_after)


def final_rate_stalls(dev_ppls: list[float], within: float, halvings: int) -> int:
    """How many of the last evaluations in a row were stalls made at the final learning rate: each one a stall
    with at least ``halvings`` stalls before it (which halved the rate as far as it goes)."""
    stall = [improvement(dev_ppls, i) <= within for i in range(1, len(dev_ppls))]  # evaluations 2, 3, ...
    run = 0
    while run < len(stall) and stall[-1 - run] and sum(stall[: len(stall) - 1 - run]) >= halvings:
        run += 1
    return run


def wants_epoch(epoch: int, schedule: Schedule, metrics: list[dict]) -> bool:
    """Whether 1-based ``epoch`` is trained, given the records of the epochs before it."""
    if epoch > schedule.epochs:
        return False
    if schedule.plateau:
        plateau, ppls = schedule.plateau, _dev_ppls(metrics[: epoch - 1])
        if stop_of(plateau) == "gate":
            at_final_rate = len(ppls) > 1 and stalls(ppls, plateau["within"]) >= plateau["halvings"]
            return not (at_final_rate and passes_gate(ppls, schedule.gate["within"], schedule.gate["window"]))
        return final_rate_stalls(ppls, plateau["within"], plateau["halvings"]) < patience_of(plateau)
    return True


def _t_quantile(dof: int, level: float) -> float:
    """The one-sided ``level`` quantile of Student's t with ``dof`` degrees of freedom."""
    return float(special.stdtrit(dof, level))


def projection(dev_ppls: list[float], window: int, horizon: int = HORIZON) -> dict | None:
    """What the gate projects may be left of a training: {fit_from (0-based index of the first evaluation fitted;
    the fit runs to the last), slope (of the log dev perplexity, per epoch), slope_bound (its one-sided LEVEL lower
    bound: the steepest fall the evaluations allow), scatter (the residuals' standard deviation), projected_left (how
    far the line, falling at slope_bound from where it ends, comes below the line's own lowest point in the window
    within ``horizon`` epochs, as a fraction of it; 0 when it does not)}. None with fewer than ``window`` evaluations.

    The reference is the fitted line, not the best recorded perplexity: the best of noisy evaluations lies below the
    curve by about the noise, and measured from it a run still falling looks finished."""
    if window < LEAST_FIT:
        raise ValueError(f"window must be at least {LEAST_FIT}, not {window}")
    n = len(dev_ppls)
    if n < window:
        return None
    start = n - window
    ys = [math.log(p) for p in dev_ppls[start:]]
    k = len(ys)
    x_mean, y_mean = (k - 1) / 2, sum(ys) / k
    sxx = sum((x - x_mean) ** 2 for x in range(k))
    slope = sum((x - x_mean) * (y - y_mean) for x, y in enumerate(ys)) / sxx
    scatter = math.sqrt(sum((y - y_mean - slope * (x - x_mean)) ** 2 for x, y in enumerate(ys)) / (k - 2))
    bound = slope - _t_quantile(k - 2, LEVEL) * scatter / math.sqrt(sxx)
    end = y_mean + slope * (k - 1 - x_mean)  # the line at the last evaluation
    reference = min(end, y_mean - slope * x_mean)  # the line's lowest point in the window: its first or last
    lowest = end + horizon * min(bound, 0.0)  # the line at its steepest, `horizon` epochs on
    left = max(0.0, 1 - math.exp(lowest - reference))
    return {"fit_from": start, "slope": slope, "slope_bound": bound, "scatter": scatter, "projected_left": left}


def passes_gate(dev_ppls: list[float], within: float, window: int, horizon: int = HORIZON) -> bool:
    """The convergence gate: at most ``within`` projected left (:func:`projection`), and the last epoch lowered the
    best by at most ``within`` too (a drop in the last epoch is one point a line through many need not call a trend).
    Fewer than ``window`` evaluations say nothing of a flat curve: not passed."""
    return _passes(projection(dev_ppls, window, horizon), improvement(dev_ppls), within)


def _passes(fit: dict | None, last: float | None, within: float) -> bool:
    return fit is not None and fit["projected_left"] <= within and (last is None or last <= within)


def convergence(metrics: list[dict], within: float, window: int, horizon: int = HORIZON) -> dict:
    """The convergence gate on one training's epoch records: {epochs, halvings (learning-rate decreases between
    epochs), last_improvement (the last epoch's, see :func:`improvement`), window, horizon, level, fit_from (the first epoch
    the line was fitted on; it runs to the last), slope, slope_bound, scatter, projected_left (see
    :func:`projection`), converged: projected_left and last_improvement both at most ``within``}. With fewer than
    ``window`` epochs nothing says the perplexity has flattened: not converged (fit_from, slope, slope_bound,
    scatter, projected_left None)."""
    ppls = _dev_ppls(metrics)
    fit = projection(ppls, window, horizon)
    last = improvement(ppls)
    halvings = sum(1 for before, after in zip(metrics, metrics[1:]) if after["lr"] < before["lr"])
    figures = dict.fromkeys(("fit_from", "slope", "slope_bound", "scatter", "projected_left"))
    if fit is not None:
        figures = {**fit, "fit_from": metrics[fit["fit_from"]].get("epoch", fit["fit_from"] + 1)}
    return {
        "epochs": len(metrics),
        "halvings": halvings,
        "last_improvement": last,
        "window": window,
        "horizon": horizon,
        "level": LEVEL,  # slope_bound's, one-sided: a lower bound (files written before had an upper 95% one)
        **figures,
        "converged": _passes(fit, last, within),
    }
