"""The training schedules (the papers' fixed one, the reduced presets' plateau rule) and the convergence gate, on
hand-made learning curves."""
import json
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.schedule import Schedule, convergence, improvement, learning_rate, schedule_of, stalls, wants_epoch

PLATEAU = Schedule(epochs=10, plateau={"within": 0.01, "halvings": 2, "max_epochs": 10})


def curve(*ppls: float, lrs: list[float] | None = None) -> list[dict]:
    return [{"epoch": i + 1, "dev_ppl": p, "lr": (lrs or [1.0] * len(ppls))[i]} for i, p in enumerate(ppls)]


def test_the_fixed_schedule_halves_every_epoch_after_halve_after():
    fixed = Schedule(epochs=8, halve_after=5)
    assert [learning_rate(1.0, e, fixed, []) for e in range(1, 9)] == [1, 1, 1, 1, 1, 0.5, 0.25, 0.125]
    assert wants_epoch(8, fixed, curve(*[9.0] * 7)) and not wants_epoch(9, fixed, curve(*[9.0] * 8))


def test_dropout_models_take_the_longer_fixed_schedule_and_plateau_overrides_both():
    train = {"epochs": 10, "halve_after": 5, "dropout_schedule": {"epochs": 12, "halve_after": 8}}
    assert schedule_of(train, 0.0) == Schedule(epochs=10, halve_after=5)
    assert schedule_of(train, 0.2) == Schedule(epochs=12, halve_after=8)
    rule = {"within": 0.01, "halvings": 2, "max_epochs": 20}
    assert schedule_of({**train, "plateau": rule}, 0.2) == Schedule(epochs=20, plateau=rule)


def test_improvement_is_over_the_best_before_and_stalls_count_what_improved_too_little():
    ppls = [10.0, 8.0, 7.96, 8.5, 7.0]
    assert improvement(ppls[:1]) is None
    assert improvement(ppls, 1) == pytest.approx(0.2)
    assert improvement(ppls, 2) == pytest.approx(0.005)   # 0.5%: a stall at 1%
    assert improvement(ppls, 3) == pytest.approx(-0.54 / 7.96)  # worse than the best: a stall
    assert improvement(ppls, 4) == pytest.approx(0.96 / 7.96)
    assert stalls(ppls, 0.01) == 2


def test_the_plateau_rule_halves_at_each_stall_and_stops_at_the_one_after_the_last_halving():
    # epoch:          1     2     3 (stall) 4     5 (stall) 6 (stall: the third)
    metrics = curve(10.0, 8.0, 7.95, 7.0, 6.99, 7.2)
    lrs = [learning_rate(0.01, e, PLATEAU, metrics) for e in range(1, 7)]
    assert lrs == [0.01, 0.01, 0.01, 0.005, 0.005, 0.0025]
    assert all(wants_epoch(e, PLATEAU, metrics) for e in range(1, 7))
    assert not wants_epoch(7, PLATEAU, metrics)  # three stalls: flat
    still_falling = curve(*[10.0 * 0.9 ** i for i in range(10)])
    assert wants_epoch(10, PLATEAU, still_falling) and not wants_epoch(11, PLATEAU, still_falling)  # max_epochs
    no_halving = Schedule(epochs=10, plateau={"within": 0.01, "halvings": 0, "max_epochs": 10})
    assert not wants_epoch(4, no_halving, curve(10.0, 8.0, 8.0)) and learning_rate(1.0, 3, no_halving,
                                                                                   curve(10.0, 8.0)) == 1.0


def test_the_convergence_gate():
    flat = convergence(curve(10.0, 6.0, 5.0, 4.98, lrs=[1.0, 1.0, 0.5, 0.25]), 0.01)
    assert flat == {"epochs": 4, "halvings": 2, "last_improvement": pytest.approx(0.004), "converged": True}
    # the dropout system: still 5% down per epoch when its schedule ended
    falling = convergence(curve(14.0, 12.3, 11.68, 11.08), 0.01)
    assert not falling["converged"] and falling["last_improvement"] == pytest.approx(0.6 / 11.68)
    worse = convergence(curve(10.0, 6.0, 6.4), 0.01)  # overfitting at the end: nothing more to gain
    assert worse["converged"] and worse["last_improvement"] < 0
    assert not convergence(curve(10.0), 0.01)["converged"]  # one epoch says nothing
    assert convergence(curve(10.0, 9.85), 0.02)["converged"] and not convergence(curve(10.0, 9.85), 0.01)["converged"]


def test_a_plateau_run_that_stopped_by_its_rule_passes_the_gate():
    metrics = []
    for ppl in (10.0, 8.0, 7.95, 7.0, 6.99, 7.2, 5.0):
        epoch = len(metrics) + 1
        if not wants_epoch(epoch, PLATEAU, metrics):
            break
        metrics.append({"epoch": epoch, "dev_ppl": ppl, "lr": learning_rate(1.0, epoch, PLATEAU, metrics)})
    assert len(metrics) == 6
    assert convergence(metrics, PLATEAU.plateau["within"]) == {"epochs": 6, "halvings": 2,
                                                               "last_improvement": pytest.approx(-0.21 / 6.99),
                                                               "converged": True}


def test_nmt_config_shows_the_schedule_a_system_trains_by_and_the_keys_it_comes_from(capsys):
    """train.epochs gives way to dropout_schedule for a dropout system and to plateau in the reduced presets:
    `nmt config` says which, so nobody has to follow the keys to the training loop."""
    root = Path(__file__).resolve().parents[1]
    table = str(root / "workflow/tables/luong2015_table1.yaml")
    shown = {}
    for preset, system in (("paper", "base_reverse_dropout"), ("paper", "base"), ("small", "base")):
        main(["config", "--params", str(root / "params.yaml"), "--preset", preset, "--table", table, "--system", system])
        shown[preset, system] = json.loads(capsys.readouterr().out)["schedule"]
    assert shown["paper", "base_reverse_dropout"]["epochs"] == 12 and shown["paper", "base_reverse_dropout"]["halve_after"] == 8
    assert shown["paper", "base_reverse_dropout"]["source"].startswith("train.dropout_schedule")
    assert (shown["paper", "base"]["epochs"], shown["paper", "base"]["source"]) == (10, "train.epochs, train.halve_after")
    assert shown["small", "base"]["source"] == "train.plateau" and shown["small", "base"]["plateau"]["max_epochs"] == 20
    assert "until the dev perplexity is flat" in shown["small", "base"]["rule"]
