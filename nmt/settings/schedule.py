"""How long a system trains and at which learning rate, and the gate that says whether it converged.
Details: docs/internals/settings.md."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from scipy import special

HORIZON = 10  # epochs: how far ahead the convergence gate projects a training's dev perplexity
LEAST_FIT = 3  # evaluations: a line through fewer leaves no scatter to bound its slope by


@dataclass(frozen=True)
class Schedule:
    """A system's schedule: ``epochs`` (fixed: the epochs trained; plateau: at most), ``halve_after`` (fixed only)
    and ``plateau`` ({within, halvings, patience, max_epochs}, or None for the fixed schedule)."""

    epochs: int
    halve_after: int | None = None
    plateau: dict | None = None
    source: str = field(default="", compare=False)  # the train keys it was read from

    def as_dict(self) -> dict:
        """What `nmt config` shows of a system's effective schedule: its fields and the rule in words."""
        return {**asdict(self), "rule": self.describe()}

    def describe(self) -> str:
        if self.plateau:
            patience = self.plateau["patience"]
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


def schedule_of(train, dropout: float) -> Schedule:
    """The schedule a system's ``train`` settings (nmt.settings.sections.TrainSettings) ask for (``dropout``: its
    model's dropout)."""
    if train.plateau:
        return Schedule(epochs=train.plateau["max_epochs"], plateau=dict(train.plateau), source="train.plateau")
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
        plateau = schedule.plateau
        return (
            final_rate_stalls(_dev_ppls(metrics[: epoch - 1]), plateau["within"], plateau["halvings"])
            < plateau["patience"]
        )
    return True


def _t95(dof: int) -> float:
    """The one-sided 95% quantile of Student's t with ``dof`` degrees of freedom."""
    return float(special.stdtrit(dof, 0.95))


def projection(dev_ppls: list[float], window: int, horizon: int = HORIZON) -> dict | None:
    """What the gate projects is left of a training (see the module's docstring): {fit_from (0-based index of the
    first evaluation fitted; the fit runs to the last), slope (of the log dev perplexity, per epoch), slope_bound
    (its one-sided 95% upper bound), scatter (the residuals' standard deviation), projected_left (how far the line,
    falling at slope_bound from where it ends, comes below the best dev perplexity within ``horizon`` epochs, as a
    fraction of that best; 0 when it does not)}. None with fewer than ``window`` evaluations."""
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
    bound = slope + _t95(k - 2) * scatter / math.sqrt(sxx)
    end = y_mean + slope * (k - 1 - x_mean)  # the line at the last evaluation
    lowest = end + (horizon if bound < 0 else 1) * bound  # the line's lowest point in the next `horizon` epochs
    left = max(0.0, 1 - math.exp(lowest - math.log(min(dev_ppls))))
    return {"fit_from": start, "slope": slope, "slope_bound": bound, "scatter": scatter, "projected_left": left}


def convergence(metrics: list[dict], within: float, window: int, horizon: int = HORIZON) -> dict:
    """The convergence gate on one training's epoch records: {epochs, halvings (learning-rate decreases between
    epochs), last_improvement (the last epoch's, see :func:`improvement`), window, horizon, fit_from (the first epoch
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
    converged = fit is not None and fit["projected_left"] <= within and (last is None or last <= within)
    return {
        "epochs": len(metrics),
        "halvings": halvings,
        "last_improvement": last,
        "window": window,
        "horizon": horizon,
        **figures,
        "converged": converged,
    }
