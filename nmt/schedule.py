"""How long a system trains and at which learning rate, and the rule that says whether it converged.

Two schedules (``train.plateau`` picks):

- fixed (``plateau: null``, the papers' own): ``epochs`` epochs, the learning rate halved every epoch after
  ``halve_after`` (``dropout_schedule`` for models with dropout: Luong et al. train those longer);
- plateau (the reduced presets' one rule for every system, so that no system is cut short by an epoch count meant for
  another): after every epoch the dev perplexity is evaluated; an epoch that does not lower the best dev perplexity
  so far by more than the fraction ``within`` is a *stall*; each of the first ``halvings`` stalls halves the learning
  rate, the next one ends training (the dev perplexity is flat), and ``max_epochs`` ends it in any case. Training
  keeps the best evaluation (``train.keep: best``).

The convergence gate (:func:`convergence`) judges every system, whatever its schedule, by the same test as a stall:
its last epoch lowered the best dev perplexity before it by at most ``within``. A plateau run that stopped by its
rule has converged by construction; one that reached ``max_epochs`` still improving, or a fixed schedule that ended
while the perplexity was still falling, has not.

Everything is decided from the recorded epoch metrics (``metrics.jsonl``'s records), so a resumed run decides as an
uninterrupted one.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Schedule:
    """A system's schedule: ``epochs`` (fixed: the epochs trained; plateau: at most), ``halve_after`` (fixed only)
    and ``plateau`` ({within, halvings, max_epochs}, or None for the fixed schedule)."""
    epochs: int
    halve_after: int | None = None
    plateau: dict | None = None
    source: str = field(default="", compare=False)  # the train keys it was read from

    def as_dict(self) -> dict:
        """What `nmt config` shows of a system's effective schedule: its fields and the rule in words."""
        return {**asdict(self), "rule": self.describe()}

    def describe(self) -> str:
        if self.plateau:
            return (f"until the dev perplexity is flat: the learning rate halved at each of the first "
                    f"{self.plateau['halvings']} epochs that lower it by at most {self.plateau['within']:.1%}, "
                    f"stopped at the next, at most {self.epochs} epochs")
        return f"{self.epochs} epochs, the learning rate halved every epoch after epoch {self.halve_after}"


def schedule_of(train: dict, dropout: float) -> Schedule:
    """The schedule a system's resolved ``train`` section asks for (``dropout``: its model's dropout)."""
    plateau = train.get("plateau")
    if plateau:
        return Schedule(epochs=plateau["max_epochs"], plateau=dict(plateau), source="train.plateau")
    longer = train.get("dropout_schedule") or {}
    if dropout > 0 and longer:
        return Schedule(epochs=longer.get("epochs", train["epochs"]),
                        halve_after=longer.get("halve_after", train["halve_after"]),
                        source="train.dropout_schedule (model.dropout > 0), over train.epochs and train.halve_after")
    return Schedule(epochs=train["epochs"], halve_after=train["halve_after"], source="train.epochs, train.halve_after")


def unread_keys(train: dict) -> tuple[str, ...]:
    """The ``train`` keys that schedule_of does not read for this section: the fixed schedule's under a plateau."""
    return ("epochs", "halve_after", "dropout_schedule") if train.get("plateau") else ()


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


def wants_epoch(epoch: int, schedule: Schedule, metrics: list[dict]) -> bool:
    """Whether 1-based ``epoch`` is trained, given the records of the epochs before it."""
    if epoch > schedule.epochs:
        return False
    if schedule.plateau:
        return stalls(_dev_ppls(metrics[:epoch - 1]), schedule.plateau["within"]) <= schedule.plateau["halvings"]
    return True


def convergence(metrics: list[dict], within: float) -> dict:
    """The convergence gate on one training's epoch records: {epochs, halvings (learning-rate decreases between
    epochs), last_improvement (see :func:`improvement`), converged}. With fewer than two epochs nothing says the
    perplexity has flattened: not converged."""
    ppls = _dev_ppls(metrics)
    last = improvement(ppls)
    halvings = sum(1 for before, after in zip(metrics, metrics[1:]) if after["lr"] < before["lr"])
    return {"epochs": len(metrics), "halvings": halvings, "last_improvement": last,
            "converged": last is not None and last <= within}
