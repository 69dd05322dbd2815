"""How long a system trains and at which learning rate, and the gate that says whether it converged.

Two schedules (``train.plateau`` picks):

- fixed (``plateau: null``, the papers' own): ``epochs`` epochs, the learning rate halved every epoch after
  ``halve_after`` (``dropout_schedule`` for models with dropout: Luong et al. train those longer);
- plateau (the reduced presets' one rule for every system, so that no system is cut short by an epoch count meant for
  another): after every epoch the dev perplexity is evaluated; an epoch that does not lower the best dev perplexity
  so far by more than the fraction ``within`` is a *stall*. Each of the first ``halvings`` stalls halves the learning
  rate; at the final rate, training ends once the last ``patience`` evaluations were all stalls (consecutive ones,
  each made at the final rate), and ``max_epochs`` ends it in any case. ``patience`` 1 ends it at the first stall
  at the final rate (the rule before ``patience`` existed: a plateau recorded without it means 1, nmt.settings).
  Training keeps the best evaluation (``train.keep: best``).

The convergence gate (:func:`convergence`) judges every system, whatever its schedule, by a different test from a
stall: the cumulative gain of its last ``window`` evaluations, how much the best of them lowered the best dev
perplexity before them (as a fraction of that best; negative when they are all worse). A system converged when that
gain is at most ``within``: its last ``window`` evaluations together, not one epoch, found nothing more than that.
A stall is one epoch's test, so a rule that stops at stalls does not pass the gate by construction: two consecutive
stalls of 0.8% each are a 1.6% gain over a window of two, and fail a gate of 1%; a run that reached ``max_epochs``
still improving, or a fixed schedule that ended while the perplexity was still falling, fails it too.

Everything is decided from the recorded epoch metrics (``metrics.jsonl``'s records), so a resumed run decides as an
uninterrupted one.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


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
            stop = ("stopped at the next" if patience == 1 else
                    f"stopped once {patience} epochs in a row at the final rate do so")
            return (f"until the dev perplexity is flat: the learning rate halved at each of the first "
                    f"{self.plateau['halvings']} epochs that lower it by at most {self.plateau['within']:.1%}, "
                    f"{stop}, at most {self.epochs} epochs")
        return f"{self.epochs} epochs, the learning rate halved every epoch after epoch {self.halve_after}"


def schedule_of(train, dropout: float) -> Schedule:
    """The schedule a system's ``train`` settings (nmt.settings.sections.TrainSettings) ask for (``dropout``: its
    model's dropout)."""
    if train.plateau:
        return Schedule(epochs=train.plateau["max_epochs"], plateau=dict(train.plateau), source="train.plateau")
    longer = train.dropout_schedule or {}
    if dropout > 0 and longer:
        fixed = {"epochs": train.epochs, "halve_after": train.halve_after, **longer}
        return Schedule(epochs=fixed["epochs"], halve_after=fixed["halve_after"],
                        source="train.dropout_schedule (model.dropout > 0), over train.epochs and train.halve_after")
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
        return base_lr * 0.5 ** min(stalls(_dev_ppls(metrics[:epoch - 1]), schedule.plateau["within"]),
                                    schedule.plateau["halvings"])
    return base_lr * 0.5 ** max(0, epoch - schedule.halve_after)


def final_rate_stalls(dev_ppls: list[float], within: float, halvings: int) -> int:
    """How many of the last evaluations in a row were stalls made at the final learning rate: each one a stall
    with at least ``halvings`` stalls before it (which halved the rate as far as it goes)."""
    stall = [improvement(dev_ppls, i) <= within for i in range(1, len(dev_ppls))]  # evaluations 2, 3, ...
    run = 0
    while run < len(stall) and stall[-1 - run] and sum(stall[:len(stall) - 1 - run]) >= halvings:
        run += 1
    return run


def wants_epoch(epoch: int, schedule: Schedule, metrics: list[dict]) -> bool:
    """Whether 1-based ``epoch`` is trained, given the records of the epochs before it."""
    if epoch > schedule.epochs:
        return False
    if schedule.plateau:
        plateau = schedule.plateau
        return final_rate_stalls(_dev_ppls(metrics[:epoch - 1]), plateau["within"],
                                 plateau["halvings"]) < plateau["patience"]
    return True


def window_gain(dev_ppls: list[float], window: int) -> float | None:
    """How much the best of the last ``window`` evaluations lowered the best dev perplexity before them, as a
    fraction of that best (negative: all of them were worse); None with fewer than ``window + 1`` evaluations."""
    if window < 1:
        raise ValueError(f"window must be at least 1, not {window}")
    if len(dev_ppls) < window + 1:
        return None
    best_before = min(dev_ppls[:-window])
    return (best_before - min(dev_ppls[-window:])) / best_before


def convergence(metrics: list[dict], within: float, window: int) -> dict:
    """The convergence gate on one training's epoch records: {epochs, halvings (learning-rate decreases between
    epochs), last_improvement (the last epoch's, see :func:`improvement`), window, window_gain (see
    :func:`window_gain`), converged: window_gain <= within}. With fewer than ``window + 1`` epochs nothing says the
    perplexity has flattened: not converged (window_gain None)."""
    ppls = _dev_ppls(metrics)
    gain = window_gain(ppls, window)
    halvings = sum(1 for before, after in zip(metrics, metrics[1:]) if after["lr"] < before["lr"])
    return {"epochs": len(metrics), "halvings": halvings, "last_improvement": improvement(ppls), "window": window,
            "window_gain": gain, "converged": gain is not None and gain <= within}
