"""Live curves without the tensorboard package: a training says so once and writes nothing else."""
from nmt import curves


def test_without_tensorboard_a_training_says_once_that_curves_are_off(tmp_path, monkeypatch):
    monkeypatch.setattr(curves, "SummaryWriter", None)
    said = []
    live = curves.Curves(tmp_path, "base", log=said.append)
    assert len(said) == 1 and "no live curves" in said[0] and "[base]" in said[0]
    assert not live.wants_running(curves.RUNNING_EVERY)
    live.running(curves.RUNNING_EVERY, 10.0, 5)
    live.evaluation(10, 3.5)
    live.epoch(10, {"train_ppl": 4.0, "lr": 1.0, "tgt_tokens_per_s": 100.0})
    live.close()
    assert not (tmp_path / curves.CURVES_DIR).exists() and len(said) == 1
