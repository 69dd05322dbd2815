"""Training: deterministic, and a killed run resumes to exactly the result of an uninterrupted one."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from nmt.data.prepare import prepare
from nmt.data.synth import generate
from nmt import config as cfg
from nmt.bench.estimate import epoch_check
from nmt.models.io import load_checkpoint, read_model_file
from nmt.train import learning_rate, wants_epoch

ROOT = Path(__file__).resolve().parents[1]

TABLE = {
    "id": "t", "title": "t", "paper": "p", "task": "en-de", "testset": "test", "columns": ["ppl"],
    "rows": [{"label": "feed", "system": "feed", "paper": {}}],
    "systems": {
        "feed": {"model": {"attention": "global", "score": "general", "input_feed": True, "reverse": True,
                           "dropout": 0.2}},
    },
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    generate(root / "raw", seed=3, n_train=400, n_dev=30, n_test=30, n_align=5, max_len=15)
    prepare(root / "raw", root / "prep", splits=["train", "dev", "test"], src_lang="en", tgt_lang="de",
            max_len=15, src_vocab=300, tgt_vocab=300)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["presets_dir"] = str(root / "presets")
    params["tables"] = [str(root / "table.yaml")]
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    preset = yaml.safe_load((ROOT / "workflow/presets/tiny.yaml").read_text())
    preset["model"].update(layers=1, hidden=16, embed=16)
    preset["train"].update(epochs=3, halve_after=1, batch_size=8, dropout_schedule={"epochs": 3, "halve_after": 1})
    (root / "table.yaml").write_text(yaml.safe_dump(TABLE))
    (root / "presets").mkdir()
    (root / "presets" / "unit.yaml").write_text(yaml.safe_dump(preset))
    return root, "unit"


def train_cmd(root, preset, out, data="prep"):
    return [sys.executable, "-m", "nmt.cli", "train", "--params", str(root / "params.yaml"), "--preset", preset,
            "--table", str(root / "table.yaml"), "--system", "feed", "--data", str(root / data),
            "--out", str(out), "--threads", "1"]


def final_state(out):
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    for m in metrics:  # wall-clock figures legitimately differ between runs
        m.pop("elapsed_s")
        m.pop("tgt_tokens_per_s")
    model = read_model_file(out / "model.pt")["model"]  # torch.load(weights_only=True): plain data only
    return metrics, model


def assert_same_run(a, b):
    assert a[0] == b[0]
    assert a[1].keys() == b[1].keys()
    for key in a[1]:
        assert torch.equal(a[1][key], b[1][key]), key


def kill_when(command, ready, *, pause=0.0, poll=0.01, timeout=120):
    """Start `command`, SIGKILL it once `ready()` is true (after `pause` seconds more: a number, or a function called
    then, e.g. half an epoch's time), and check that it was killed rather than finished."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not ready():
        time.sleep(poll)
    time.sleep(pause() if callable(pause) else pause)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed; make it longer"


def epochs_recorded(out) -> int:
    metrics = out / "metrics.jsonl"
    return len(metrics.read_text().splitlines()) if metrics.exists() else 0


def half_an_epoch(out) -> float:
    """Half the time the run in `out` took for its first epoch: a pause after that epoch's checkpoint that lands in
    the middle of the next one, on a fast machine as on a slow one (a fixed pause once outlasted the whole run)."""
    return 0.5 * json.loads((out / "metrics.jsonl").read_text().splitlines()[0])["elapsed_s"]


def test_learning_rate_schedule():
    assert [learning_rate(1.0, e, 5) for e in range(1, 9)] == [1, 1, 1, 1, 1, 0.5, 0.25, 0.125]


def test_until_flat_adds_epochs_only_while_the_dev_perplexity_still_moves():
    def records(*ppls):
        return [{"dev_ppl": ppl} for ppl in ppls]

    rule = {"within": 0.03, "extra_epochs": 2}
    assert wants_epoch(3, 3, None, records(9.0, 5.0))  # scheduled epochs are always trained
    assert not wants_epoch(4, 3, None, records(9.0, 6.0, 5.0))  # without the rule, the schedule is all
    assert wants_epoch(4, 3, rule, records(9.0, 6.0, 5.0))  # 16.7% apart: one more
    assert not wants_epoch(4, 3, rule, records(9.0, 5.1, 5.0))  # 2.0% apart: flat
    assert wants_epoch(4, 3, rule, records(9.0, 4.9, 5.2))  # rising by 6.1% is not flat either
    assert wants_epoch(5, 3, rule, records(9.0, 6.0, 5.0, 4.0))
    assert not wants_epoch(6, 3, rule, records(9.0, 6.0, 5.0, 4.0, 3.0))  # the extra epochs are spent
    assert wants_epoch(2, 1, rule, records(9.0))  # one epoch says nothing about flatness


def test_until_flat_with_min_epochs_stops_a_flat_system_before_its_schedule_ends():
    def records(*ppls):
        return [{"dev_ppl": ppl} for ppl in ppls]

    rule = {"within": 0.03, "extra_epochs": 2, "min_epochs": 3}
    assert wants_epoch(3, 6, rule, records(9.0, 5.1))  # the first min_epochs are always trained ...
    assert not wants_epoch(4, 6, rule, records(9.0, 5.1, 5.0))  # ... then flat: no more, though 6 were scheduled
    assert wants_epoch(4, 6, rule, records(9.0, 6.0, 5.0))  # still falling: the schedule goes on
    assert wants_epoch(7, 6, rule, records(9.0, 8.0, 7.0, 6.0, 5.0, 4.0))  # and past it, as without min_epochs
    assert not wants_epoch(9, 6, rule, records(*range(16, 8, -1)))  # until the extra epochs are spent


def test_until_flat_trains_on_past_the_schedule_and_a_killed_run_resumes_exactly(workspace):
    """`train.until_flat` end to end: a threshold no run meets trains every extra epoch, one every run meets stops
    one epoch after the schedule, and a run killed in its extra epochs resumes to the uninterrupted result (the
    decision comes from the recorded metrics)."""
    root, _ = workspace
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["train"].update(epochs=1, dropout_schedule={"epochs": 1, "halve_after": 1})
    for name, within in (("unit_never_flat", 1e-9), ("unit_always_flat", 1.0)):
        preset["train"]["until_flat"] = {"within": within, "extra_epochs": 3}
        (root / "presets" / f"{name}.yaml").write_text(yaml.safe_dump(preset))
    subprocess.run(train_cmd(root, "unit_always_flat", root / "flat"), check=True, capture_output=True)
    assert [m["epoch"] for m in final_state(root / "flat")[0]] == [1, 2]
    subprocess.run(train_cmd(root, "unit_never_flat", root / "falling"), check=True, capture_output=True)
    reference = final_state(root / "falling")
    assert [m["epoch"] for m in reference[0]] == [1, 2, 3, 4]
    assert [m["lr"] for m in reference[0]] == [learning_rate(reference[0][0]["lr"], e, 1) for e in range(1, 5)]

    out = root / "falling_killed"  # killed in the extra epochs: after the second one's record
    kill_when(train_cmd(root, "unit_never_flat", out), lambda: epochs_recorded(out) >= 2)
    subprocess.run(train_cmd(root, "unit_never_flat", out), check=True, capture_output=True)
    assert_same_run(reference, final_state(out))

    # min_epochs: a system flat after two epochs stops there, though four were scheduled
    preset["train"].update(epochs=4, until_flat={"within": 1.0, "extra_epochs": 0, "min_epochs": 2},
                           dropout_schedule={"epochs": 4, "halve_after": 1})
    (root / "presets" / "unit_early.yaml").write_text(yaml.safe_dump(preset))
    subprocess.run(train_cmd(root, "unit_early", root / "early"), check=True, capture_output=True)
    assert [m["epoch"] for m in final_state(root / "early")[0]] == [1, 2]


def test_seeded_runs_are_identical_and_sigkill_resume_equals_uninterrupted(workspace):
    root, preset = workspace
    subprocess.run(train_cmd(root, preset, root / "a"), check=True, capture_output=True)
    subprocess.run(train_cmd(root, preset, root / "b"), check=True, capture_output=True)
    reference = final_state(root / "a")
    assert len(reference[0]) == 3
    assert_same_run(reference, final_state(root / "b"))

    out = root / "killed"
    # Wait until the first epoch is done and its checkpoint written, then kill without warning mid-epoch 2.
    kill_when(train_cmd(root, preset, out), lambda: epochs_recorded(out) >= 1 and (out / "checkpoint.pt").exists(),
              pause=lambda: half_an_epoch(out), poll=0.02)
    assert not (out / "model.pt").exists()
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    assert_same_run(reference, final_state(out))


def test_sigterm_writes_a_mid_epoch_checkpoint_and_resumes_exactly(workspace):
    root, preset = workspace
    subprocess.run(train_cmd(root, preset, root / "ref"), check=True, capture_output=True)
    out = root / "term"
    proc = subprocess.Popen(train_cmd(root, preset, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while proc.poll() is None and not (out / "model.json").exists():
        time.sleep(0.02)
    # model.json appears once the signal handlers are in place; the first update then sees the request (an
    # epoch of this corpus takes a fraction of a second, so waiting longer could miss the training)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    state = load_checkpoint(out / "checkpoint.pt")["state"]
    assert state["batch"] > 0 or state["epoch"] > 1
    result = subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True, text=True)
    assert "resuming from" in result.stderr
    assert_same_run(final_state(root / "ref"), final_state(out))


def test_a_rerun_after_the_last_checkpoint_restores_the_outputs_a_workflow_deleted(workspace, tmp_path):
    # A job killed between the last epoch's checkpoint and its exit: Snakemake (or SLURM's requeue) removes its
    # outputs and reruns it; the rerun has no epoch left to train and must still write every output.
    root, preset = workspace
    subprocess.run(train_cmd(root, preset, root / "whole"), check=True, capture_output=True)
    out = tmp_path / "finished"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    for name in ("model.pt", "model.json", "metrics.jsonl", "metrics.csv"):
        (out / name).unlink()
    result = subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True, text=True)
    assert "resuming from" in result.stderr and "epoch 4, batch 0" in result.stderr
    assert_same_run(final_state(root / "whole"), final_state(out))
    assert (out / "metrics.csv").read_text().count("\n") == 4  # header + 3 epochs


def test_changed_config_starts_afresh_and_keeps_the_old_checkpoint(workspace, tmp_path):
    root, preset = workspace
    out = tmp_path / "changed"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    old_checkpoint = (out / "checkpoint.pt").read_bytes()
    table = yaml.safe_load((root / "table.yaml").read_text())
    table["systems"]["feed"]["model"]["dropout"] = 0.3
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    cmd = train_cmd(root, preset, out)
    cmd[cmd.index("--table") + 1] = str(tmp_path / "table.yaml")
    result = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "different settings" in result.stderr and "resuming" not in result.stderr
    assert (out / "checkpoint.pt.stale").read_bytes() == old_checkpoint
    assert read_model_file(out / "model.pt")["config"]["model"]["dropout"] == 0.3


class StopAfter:
    """Stands in for train's StopRequested: 'receives' SIGTERM after `n` updates."""

    def __init__(self, n):
        self.n, self.checks = n, 0

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @property
    def signum(self):
        self.checks += 1
        return signal.SIGTERM if self.checks >= self.n else None


def test_a_cuda_run_checkpoints_its_cuda_rng_state_and_restores_it_on_resume(workspace, tmp_path, monkeypatch):
    # No GPU here: the run computes on the CPU, nmt.models.io takes its device for a CUDA one, and torch.cuda's
    # generator functions are recorded (tests/test_model_io.py: the same with real CUDA device objects).
    import nmt.train as train_module
    from nmt import config as cfg
    from nmt.models import io as model_io
    from test_model_io import FakeCudaRng

    root, preset = workspace
    config = cfg.system_config(cfg.load_params(root / "params.yaml", preset), cfg.load_table(root / "table.yaml"),
                               "feed", str(root / "table.yaml"))
    config["train"]["max_updates"] = 8  # all within epoch 1 (50 batches)
    fake = FakeCudaRng()
    monkeypatch.setattr(torch.cuda, "get_rng_state", fake.get_rng_state)
    monkeypatch.setattr(torch.cuda, "set_rng_state", fake.set_rng_state)
    monkeypatch.setattr(model_io, "on_cuda", lambda device: True)
    train_module.train(config, root / "prep", tmp_path / "whole", device="cpu", progress=False)

    monkeypatch.setattr(train_module, "StopRequested", StopAfter(3))  # SIGTERM after update 3, mid-epoch
    with pytest.raises(SystemExit) as stopped:
        train_module.train(config, root / "prep", tmp_path / "term", device="cpu", progress=False)
    assert stopped.value.code == 128 + signal.SIGTERM
    state = load_checkpoint(tmp_path / "term" / "checkpoint.pt")["state"]
    assert (state["epoch"], state["batch"]) == (1, 3)
    device, saved = fake.gets[-1]  # asked for the run's device's state when it checkpointed
    assert device == torch.device("cpu") and torch.equal(state["cuda_rng"], saved)
    assert fake.sets == []

    monkeypatch.setattr(train_module, "StopRequested", StopAfter(10 ** 9))
    train_module.train(config, root / "prep", tmp_path / "term", device="cpu", progress=False)
    assert len(fake.sets) == 1  # restored once, where the epoch resumed, into the run's device
    assert fake.sets[0][0] == torch.device("cpu") and torch.equal(fake.sets[0][1], saved)
    assert_same_run(final_state(tmp_path / "whole"), final_state(tmp_path / "term"))


def test_epoch_check_trains_both_paths_once_per_seed(workspace, tmp_path):
    """`nmt bench train --epoch-check`: without dropout the fast and eager paths end the epoch at the same dev
    perplexity; with dropout their masks come from different generators, and each seed's pair is kept beside the
    means and the spread between seeds."""
    root, preset = workspace
    table = {**TABLE, "systems": {"feed": TABLE["systems"]["feed"],
                                  "feed_no_dropout": {"model": {**TABLE["systems"]["feed"]["model"], "dropout": 0.0}}}}
    table_path = tmp_path / "table.yaml"
    table_path.write_text(yaml.safe_dump(table))
    config = cfg.load_params(root / "params.yaml", preset)
    cpu = torch.device("cpu")
    same = epoch_check(config, root, str(table_path), "feed_no_dropout", root / "prep", device=cpu, threads=1,
                       progress=lambda message: None)
    assert same["seeds"] == [config["train"]["seed"]]
    assert same["dev_ppl_ratio"] == pytest.approx(1.0, abs=1e-4)

    check = epoch_check(config, root, str(table_path), "feed", root / "prep", device=cpu, threads=1, seeds=[1, 2],
                        progress=lambda message: None)
    assert check["seeds"] == [1, 2]
    for path in ("fast", "eager"):
        ppls = [run["dev_ppl"] for run in check[path]["runs"]]
        assert [run["seed"] for run in check[path]["runs"]] == [1, 2] and ppls[0] != ppls[1]
        assert check[path]["dev_ppl"] == pytest.approx(sum(ppls) / 2)
        assert check[path]["dev_ppl_spread"] == pytest.approx(max(ppls) / min(ppls) - 1)
    assert check["dev_ppl_ratio"] == pytest.approx(check["fast"]["dev_ppl"] / check["eager"]["dev_ppl"])


def test_keep_best_keeps_the_best_evaluation_and_a_killed_run_resumes_to_it(workspace):
    """train.keep: best on a run whose dev perplexity rises at the end (60 training pairs, learnt by heart):
    model.pt holds the parameters of the evaluation with the lowest dev perplexity, among the epochs' ends and the
    evaluations every eval_every updates; evaluating changes nothing of the training itself; a run killed without
    warning resumes to the same files."""
    from nmt.likelihood import corpus_nll, perplexity
    from nmt.models.io import load_models
    root, _ = workspace
    generate(root / "raw_small", seed=5, n_train=60, n_dev=30, n_test=5, n_align=5, max_len=15)
    prepare(root / "raw_small", root / "prep_small", splits=["train", "dev", "test"], src_lang="en", tgt_lang="de",
            max_len=15, src_vocab=300, tgt_vocab=300)
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["model"].update(hidden=32, embed=32)
    preset["train"].update(epochs=14, halve_after=14, lr=0.05, dropout_schedule={"epochs": 14, "halve_after": 14})
    (root / "presets" / "unit_last.yaml").write_text(yaml.safe_dump(preset))
    preset["train"].update(keep="best", eval_every=3)
    (root / "presets" / "unit_best.yaml").write_text(yaml.safe_dump(preset))
    subprocess.run(train_cmd(root, "unit_last", root / "last", "prep_small"), check=True, capture_output=True)
    subprocess.run(train_cmd(root, "unit_best", root / "best", "prep_small"), check=True, capture_output=True)
    last, best = final_state(root / "last"), final_state(root / "best")
    assert last[0] == best[0]  # the same training: evaluating every 3 updates changes nothing
    dev_ppls = [m["dev_ppl"] for m in last[0]]
    assert dev_ppls[-1] > min(dev_ppls) * 1.01, f"the dev perplexity should rise at the end: {dev_ppls}"
    evaluations = [json.loads(line) for line in (root / "best" / "evaluations.jsonl").read_text().splitlines()]
    assert len(evaluations) > len(dev_ppls)  # every 3 updates and every epoch's end
    kept = min(evaluations, key=lambda e: e["dev_ppl"])
    assert json.loads((root / "best" / "model.json").read_text())["kept"] == kept
    # model.pt is the kept evaluation's model: its dev perplexity is the kept one, not the last epoch's
    model, *_ = load_models([str(root / "best" / "model.pt")], "cpu", "prob")
    from nmt.data.prepare import load_split
    dev_src, dev_tgt = load_split(root / "prep_small" / "dev.pt")
    assert perplexity(*corpus_nll(model.eval(), dev_src, dev_tgt, 8, torch.device("cpu"))) == \
        pytest.approx(kept["dev_ppl"], rel=1e-6)
    assert kept["dev_ppl"] < dev_ppls[-1]

    out = root / "best_killed"  # killed without warning once a best.pt and 5 epochs exist
    kill_when(train_cmd(root, "unit_best", out, "prep_small"),
              lambda: (out / "best.pt").exists() and epochs_recorded(out) >= 5, poll=0.005)
    subprocess.run(train_cmd(root, "unit_best", out, "prep_small"), check=True, capture_output=True)
    assert_same_run(best, final_state(out))
    assert (out / "evaluations.jsonl").read_text() == (root / "best" / "evaluations.jsonl").read_text()
