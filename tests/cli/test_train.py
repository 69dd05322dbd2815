"""Training: deterministic, and a killed run resumes to exactly the result of an uninterrupted one."""

import errno
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from nmt import config as cfg
from nmt.bench.estimate import epoch_check
from nmt.cli import main
from nmt.data.prepare import prepare, prepared_fingerprint
from nmt.data.synth import generate
from nmt.models.io import load_checkpoint, read_model_file
from nmt.records.metrics import metrics_digest
from nmt.scoring.bleu import bleu_tokenized
from nmt.training.curves import CURVES_DIR, RUNNING_EVERY
from nmt.training.run import better

from training_runs import TABLE, assert_same_run, epochs_recorded, final_state, half_an_epoch, kill_when, train_cmd

ROOT = Path(__file__).resolve().parents[2]


def test_the_plateau_rule_end_to_end_and_a_run_killed_after_a_halving_resumes_exactly(workspace):
    """`train.plateau` in `nmt train`: a threshold every epoch misses (within 1.0: every epoch after the first is a
    stall) halves once and, with patience 2, stops at the second stall in a row at the final rate; one no epoch
    misses trains to max_epochs at the full rate; a run killed between those two stalls resumes to the uninterrupted
    result (the rule reads the recorded metrics); with keep: best, model.pt is the best evaluation."""
    root, _ = workspace
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["train"]["keep"] = "best"
    for name, within in (("unit_always_flat", 1.0), ("unit_never_flat", 1e-9)):
        preset["train"]["plateau"] = {"within": within, "halvings": 1, "patience": 2, "max_epochs": 5}
        (root / "presets" / f"{name}.yaml").write_text(yaml.safe_dump(preset))
    subprocess.run(train_cmd(root, "unit_always_flat", root / "flat"), check=True, capture_output=True)
    flat = final_state(root / "flat")[0]
    assert [m["epoch"] for m in flat] == [1, 2, 3, 4]
    assert [m["lr"] for m in flat] == [flat[0]["lr"], flat[0]["lr"], flat[0]["lr"] / 2, flat[0]["lr"] / 2]
    subprocess.run(train_cmd(root, "unit_never_flat", root / "falling"), check=True, capture_output=True)
    falling = final_state(root / "falling")[0]
    ppls = [m["dev_ppl"] for m in falling]
    assert len(falling) == 5 or ppls[-1] >= min(ppls[:-1])  # to max_epochs, unless the perplexity rose three times

    reference = final_state(root / "flat")
    out = root / "flat_killed"  # killed after the first stall at the final rate, before the second
    kill_when(train_cmd(root, "unit_always_flat", out), lambda: epochs_recorded(out) >= 3)
    subprocess.run(train_cmd(root, "unit_always_flat", out), check=True, capture_output=True)
    assert_same_run(reference, final_state(out))
    kept = json.loads((root / "flat" / "model.json").read_text())["kept"]
    assert kept["dev_ppl"] == min(m["dev_ppl"] for m in flat)


def test_seeded_runs_are_identical_and_sigkill_resume_equals_uninterrupted(workspace):
    root, preset = workspace
    subprocess.run(train_cmd(root, preset, root / "a"), check=True, capture_output=True)
    subprocess.run(train_cmd(root, preset, root / "b"), check=True, capture_output=True)
    reference = final_state(root / "a")
    assert len(reference[0]) == 3
    assert_same_run(reference, final_state(root / "b"))

    out = root / "killed"
    # Wait until the first epoch is done and its checkpoint written, then kill without warning mid-epoch 2.
    kill_when(
        train_cmd(root, preset, out),
        lambda: epochs_recorded(out) >= 1 and (out / "checkpoint.pt").exists(),
        pause=lambda: half_an_epoch(out),
        poll=0.02,
    )
    assert not (out / "model.pt").exists()
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    assert_same_run(reference, final_state(out))


def scalars(out, tag: str) -> list[tuple[int, float]]:
    """(update, value) of one curve, as TensorBoard reads the event files of the training in `out`."""
    curves = EventAccumulator(str(out / CURVES_DIR))
    curves.Reload()
    return [(event.step, event.value) for event in curves.Scalars(tag)]


def test_live_curves_hold_metrics_jsonl_s_numbers_and_a_killed_run_resumes_them(workspace):
    """The event files TensorBoard reads: the dev and train perplexities of metrics.jsonl at each epoch's update
    count, the running train perplexity every RUNNING_EVERY updates; a run killed mid-epoch and resumed has the same
    points, none twice."""
    root, _ = workspace
    preset = "unit_curves"  # batches of 2: 200 updates an epoch, so a kill mid-epoch comes after running points that
    settings = yaml.safe_load((root / "presets" / "unit.yaml").read_text())  # the resumed run logs again
    settings["train"]["batch_size"] = 2
    (root / "presets" / f"{preset}.yaml").write_text(yaml.safe_dump(settings))
    out = root / "curves"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    dev = scalars(out, "dev/ppl")
    assert [step for step, _ in dev] == [m["updates"] for m in metrics]
    assert [value for _, value in dev] == pytest.approx([m["dev_ppl"] for m in metrics], rel=1e-6)  # float32
    assert [value for _, value in scalars(out, "train/ppl")] == pytest.approx(
        [m["train_ppl"] for m in metrics], rel=1e-6
    )
    running = scalars(out, "train/running_ppl")
    assert running and all(step % RUNNING_EVERY == 0 for step, _ in running)

    killed = root / "curves_killed"
    kill_when(
        train_cmd(root, preset, killed),
        lambda: epochs_recorded(killed) >= 1 and (killed / "checkpoint.pt").exists(),
        pause=lambda: half_an_epoch(killed),
        poll=0.02,
    )
    subprocess.run(train_cmd(root, preset, killed), check=True, capture_output=True)
    for tag in ("dev/ppl", "train/ppl", "train/running_ppl"):
        resumed = scalars(killed, tag)
        assert [step for step, _ in resumed] == [step for step, _ in scalars(out, tag)], tag
        assert [value for _, value in resumed] == pytest.approx([value for _, value in scalars(out, tag)]), tag


def reference_run(root, preset):
    """The uninterrupted training (root/ref) the interrupted ones are compared with, trained once."""
    if not (root / "ref" / "model.pt").exists():
        subprocess.run(train_cmd(root, preset, root / "ref"), check=True, capture_output=True)
    return final_state(root / "ref")


def started_training(root, preset, out):
    """`nmt train` into `out`, returned once model.json is there: its signal handlers and its directory's lock are
    in place (an epoch of this corpus takes a fraction of a second, so waiting longer could miss the training)."""
    proc = subprocess.Popen(train_cmd(root, preset, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while proc.poll() is None and not (out / "model.json").exists():
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])  # SLURM's stop; Ctrl-C
def test_a_signal_writes_a_mid_epoch_checkpoint_says_one_line_and_resumes_exactly(workspace, sig):
    root, preset = workspace
    reference = reference_run(root, preset)
    out = root / f"stopped-{sig.name}"
    proc = started_training(root, preset, out)
    proc.send_signal(sig)  # the first update sees the request
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err.decode()
    assert "Traceback" not in err.decode() and "KeyboardInterrupt" not in err.decode()
    assert f"signal {int(sig)}: checkpoint written to" in err.decode()
    state = load_checkpoint(out / "checkpoint.pt")["state"]
    assert state["batch"] > 0 or state["epoch"] > 1
    result = subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True, text=True)
    assert "resuming from" in result.stderr
    assert_same_run(reference, final_state(out))


def test_model_json_records_the_environment_and_the_wall_time(workspace, tmp_path):
    """model.json: where the training ran (nmt.base.environment) and, once model.pt is written, its wall time on its
    device: at least the epochs' own time (setup and dev evaluations come on top), at most the process's."""
    root, preset = workspace
    out = tmp_path / "timed"
    begun = time.perf_counter()
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    outside = time.perf_counter() - begun
    meta = json.loads((out / "model.json").read_text())
    env = meta["environment"]
    assert env["device"] == ("cpu" if meta["device"] == "cpu" else torch.cuda.get_device_name(meta["device"]))
    assert env["software"]["torch"] == torch.__version__ and env["software"]["cuda"] == torch.version.cuda
    assert env["hardware"]["cpu_count"] >= 1 and isinstance(env["hardware"]["gpus"], list)
    assert set(env["code"]) == {"commit", "dirty"}
    epochs = sum(json.loads(line)["elapsed_s"] for line in (out / "metrics.jsonl").read_text().splitlines())
    assert 0 < epochs <= meta["wall_s"] < outside and meta["processes"] == 1
    state = load_checkpoint(out / "checkpoint.pt")["state"]
    assert 0 < state["wall_s"] <= meta["wall_s"] and state["processes"] == 1  # the last epoch's checkpoint


def test_a_killed_and_resumed_training_sums_every_processs_wall_time(workspace):
    """wall_s over three processes: one stopped by SIGTERM (its checkpoint records its time), one resumed from it and
    killed without warning after its own checkpoint (that records both), one that resumes and finishes; the
    trained numbers are still an uninterrupted run's."""
    root, preset = workspace
    subprocess.run(train_cmd(root, preset, root / "wall_ref"), check=True, capture_output=True)
    out = root / "wall"
    proc = started_training(root, preset, out)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    first = load_checkpoint(out / "checkpoint.pt")["state"]
    assert first["wall_s"] > 0 and first["processes"] == 1

    def second_checkpoint() -> bool:  # the resumed process's first checkpoint: the end of epoch 1
        return epochs_recorded(out) >= 1 and load_checkpoint(out / "checkpoint.pt")["state"]["processes"] == 2

    kill_when(train_cmd(root, preset, out), second_checkpoint, pause=lambda: half_an_epoch(out), poll=0.02)
    second = load_checkpoint(out / "checkpoint.pt")["state"]
    assert second["processes"] == 2 and second["epoch"] == 2 and second["batch"] == 0
    # the second process added its own time (setup and the rest of epoch 1, whose elapsed_s spans both processes)
    epoch_1 = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])["elapsed_s"]
    assert second["wall_s"] > first["wall_s"] and second["wall_s"] >= epoch_1

    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    meta = json.loads((out / "model.json").read_text())
    later = [json.loads(line)["elapsed_s"] for line in (out / "metrics.jsonl").read_text().splitlines()[1:]]
    assert meta["processes"] == 3 and later
    # what the first two recorded, and at least the third's epochs from 2 on (the killed epoch 2's time is lost)
    assert meta["wall_s"] >= second["wall_s"] + sum(later)
    assert_same_run(final_state(root / "wall_ref"), final_state(out))


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


def files_of(out) -> dict:
    """Every file of a model directory and its bytes (the lock file aside)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def one_line_error(result, logged: str | None = None) -> str:
    """The one line of a command that failed with exit status 2 (after the training's log lines, which carry
    `logged`, if given, after their time stamp where they have one)."""
    lines = [line for line in result.stderr.strip().splitlines() if not (logged and logged in line)]
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("nmt: error: "), lines[0]
    return lines[0]


def test_changed_config_into_a_finished_directory_is_refused_untouched_and_replaced_with_replace(workspace, tmp_path):
    root, preset = workspace
    out = tmp_path / "changed"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    old_checkpoint, before = (out / "checkpoint.pt").read_bytes(), files_of(out)
    table = yaml.safe_load((root / "table.yaml").read_text())
    table["systems"]["feed"]["model"]["dropout"] = 0.3
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    cmd = train_cmd(root, preset, out)
    cmd[cmd.index("--table") + 1] = str(tmp_path / "table.yaml")
    line = one_line_error(subprocess.run(cmd, capture_output=True, text=True))
    assert line == (
        f"nmt: error: {out}: holds the finished model of an earlier training of feed (model.pt), trained "
        "with other settings (model.dropout 0.2, here 0.3); train into another --out, or give --replace "
        "to remove its files and train feed here"
    )
    assert files_of(out) == before  # nothing touched
    result = subprocess.run(cmd + ["--replace"], capture_output=True, text=True, check=True)
    assert "different settings" in result.stderr and "resuming" not in result.stderr
    assert (out / "checkpoint.pt.stale").read_bytes() == old_checkpoint
    assert read_model_file(out / "model.pt")["config"]["model"]["dropout"] == 0.3
    # the same training again (no --replace): its own model, resumed from its checkpoint, not refused
    again = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "resuming from" in again.stderr and "epoch 4, batch 0" in again.stderr


def test_another_system_replacing_a_finished_one_and_killed_in_epoch_1_leaves_nothing_of_the_first(workspace, tmp_path):
    """The issue's case: before, the checkpoint was moved aside and a kill in epoch 1 left model.json saying one
    system beside the other's model.pt, metrics.jsonl and best.pt. Now it is refused; with --replace the first
    system's files are gone before the second writes anything."""
    root, preset = workspace
    reference_run(root, preset)
    out = tmp_path / "models" / "feed"
    shutil.copytree(root / "ref", out)
    (out / "best.pt").write_bytes((out / "model.pt").read_bytes())  # as keep: best would have left it
    table = yaml.safe_load((root / "table.yaml").read_text())
    table["systems"]["other"] = {"model": {**table["systems"]["feed"]["model"], "input_feed": False}}
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    cmd = train_cmd(root, preset, out)
    cmd[cmd.index("--table") + 1], cmd[cmd.index("--system") + 1] = str(tmp_path / "table.yaml"), "other"
    before = files_of(out)
    line = one_line_error(subprocess.run(cmd, capture_output=True, text=True))
    assert line.startswith(
        f"nmt: error: {out}: holds the finished model of system 'feed' (model.pt), trained with "
        "other settings (model.input_feed True, here False)"
    )
    assert line.endswith("give --replace to remove its files and train other here")
    assert files_of(out) == before
    kill_when(
        cmd + ["--replace"],
        lambda: (out / "model.json").exists() and json.loads((out / "model.json").read_text())["system"] == "other",
    )
    assert json.loads((out / "model.json").read_text())["system"] == "other"
    for name in ("model.pt", "best.pt", "metrics.jsonl", "metrics.csv"):  # none of feed's files is left
        assert not (out / name).exists() or read_model_file(out / name)["system"] == "other", name
    assert (out / "checkpoint.pt.stale").read_bytes() == before["checkpoint.pt"]
    assert not (out / "tensorboard").exists() or not any("feed" in p.name for p in (out / "tensorboard").iterdir())
    # run again (the kill left its checkpoint, or none): other's training, finished, and no longer "another's"
    subprocess.run(cmd + ["--replace"], check=True, capture_output=True)
    assert read_model_file(out / "model.pt")["system"] == "other"
    assert json.loads((out / "model.json").read_text())["system"] == "other"
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 3
    assert not (out / "best.pt").exists()  # keep: last; feed's best.pt went with the rest of its files


def test_a_workflow_rerun_after_a_settings_change_starts_afresh_without_replace(workspace, tmp_path):
    """Snakemake and DVC delete a job's outputs (model.pt, metrics.jsonl, model.json) before they rerun it when its
    settings changed, and pass no --replace: the checkpoint of the old settings is moved aside, what else the old
    training left (metrics.csv, its curves) is removed, and the new training runs."""
    root, preset = workspace
    out = tmp_path / "workflow"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    old_checkpoint = (out / "checkpoint.pt").read_bytes()
    for name in ("model.pt", "metrics.jsonl", "model.json"):
        (out / name).unlink()
    table = yaml.safe_load((root / "table.yaml").read_text())
    table["systems"]["feed"]["model"]["dropout"] = 0.3
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    cmd = train_cmd(root, preset, out)
    cmd[cmd.index("--table") + 1] = str(tmp_path / "table.yaml")
    result = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "different settings" in result.stderr
    assert f"starting afresh: removed the earlier training's metrics.csv, tensorboard/ from {out}" in result.stderr
    assert (out / "checkpoint.pt.stale").read_bytes() == old_checkpoint
    assert read_model_file(out / "model.pt")["config"]["model"]["dropout"] == 0.3


def test_a_resume_onto_other_data_is_refused_and_the_same_data_elsewhere_resumes(workspace, tmp_path):
    """A checkpoint records the fingerprint of the prepared data it was trained on (its vocabularies and splits, by
    content). Run again with --data of another corpus of the same vocabulary size (a one-word slip: de-en for en-de),
    the training is refused in one line naming both, before anything is touched; the same files under another path
    resume; --replace starts afresh on the new data."""
    root, preset = workspace
    other = tmp_path / "other"
    generate(tmp_path / "raw", seed=4, n_train=400, n_dev=30, n_test=30, n_align=5, max_len=15)
    prepare(
        tmp_path / "raw",
        other,
        splits=["train", "dev", "test"],
        src_lang="en",
        tgt_lang="de",
        max_len=15,
        src_vocab=300,
        tgt_vocab=300,
    )
    out = tmp_path / "run"
    subprocess.run(train_cmd(root, preset, out), check=True, capture_output=True)
    meta = json.loads((out / "model.json").read_text())
    assert meta["data"] == {"dir": str(root / "prep"), "fingerprint": prepared_fingerprint(root / "prep")}
    # and the digest that ties metrics.jsonl to this training (nmt.records.metrics)
    epochs = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(epochs) == 3 and meta["metrics_digest"] == metrics_digest(epochs)
    for name in ("model.pt", "metrics.jsonl", "model.json"):  # as Snakemake leaves a killed job's directory
        (out / name).unlink()
    checkpoint = (out / "checkpoint.pt").read_bytes()
    refused = subprocess.run(train_cmd(root, preset, out, data=other), capture_output=True, text=True)
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip().splitlines()[-1]
    assert (
        line.startswith(f"nmt: error: {out / 'checkpoint.pt'}: trained on the data in {root / 'prep'} ")
        and f"not on {other} ({prepared_fingerprint(other)})" in line
        and "--replace" in line
    ), line
    assert (out / "checkpoint.pt").read_bytes() == checkpoint and not (out / "model.json").exists()
    moved = tmp_path / "moved"
    shutil.copytree(root / "prep", moved)  # the same data elsewhere: the same fingerprint
    resumed = subprocess.run(train_cmd(root, preset, out, data=moved), capture_output=True, text=True, check=True)
    assert "resuming from" in resumed.stderr
    replaced = subprocess.run(
        train_cmd(root, preset, out, data=other) + ["--replace"], capture_output=True, text=True, check=True
    )
    assert "trained on other data: moved to" in replaced.stderr
    assert json.loads((out / "model.json").read_text())["data"]["fingerprint"] == prepared_fingerprint(other)


def test_a_training_whose_dev_perplexity_is_not_finite_stops_in_one_line(workspace, tmp_path, monkeypatch, capsys):
    """A diverged training (its dev loss NaN) stops at that evaluation, before recording a number no reader takes:
    one line naming the system, the last checkpoint intact, no NaN in metrics.jsonl."""
    from nmt.training import run as training_run

    root, preset = workspace
    out = tmp_path / "run"
    epochs = iter([1.0, 1.0, 1.0])  # epoch 1's train and dev perplexities, epoch 2's train one; then NaN
    monkeypatch.setattr(training_run, "perplexity", lambda nll, tokens: next(epochs, math.nan) * 10)
    assert main(train_cmd(root, preset, out)[3:]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        line.startswith("nmt: error: [feed] the training diverged: dev perplexity nan after ") and "(epoch 2)" in line
    ), line
    records = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in records] == [1] and (out / "checkpoint.pt").exists()


FULL_DISK_TRAINING = """
import os, shutil, sys
from nmt.engine import mkl_on_amd
mkl_on_amd.reexec_if_useful()  # as the nmt command does before torch is imported: the same products as its runs
sys.path.insert(0, sys.argv[1])
import nmt.base.atomic
from nmt.cli import main
from stand_ins import DiskFile, FullDisk

class FullAtSecondCheckpoint(FullDisk):  # the disk fills up while the second checkpoint is written
    saves = 0

    def fdopen(self, fd, mode):
        handle = os.fdopen(fd, mode)
        if not os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".checkpoint.pt."):
            return handle
        self.saves += 1
        if self.saves < 2:
            return handle
        shutil.copyfile(os.path.join(sys.argv[2], "checkpoint.pt"), sys.argv[3])  # the first, to compare
        return DiskFile(handle, 500)

nmt.base.atomic.os = FullAtSecondCheckpoint(0)
sys.exit(main(sys.argv[4:]))
"""


def test_a_full_disk_during_training_stops_in_one_line_and_the_last_checkpoint_resumes(workspace, tmp_path):
    """The second checkpoint cannot be written (torch's writer fails past its first bytes, as on a full disk): one
    line naming the file and the checkpoint left intact, exit status 2, no temporary file left; the same command
    then resumes from that checkpoint to the uninterrupted run's result."""
    root, preset = workspace
    reference = reference_run(root, preset)
    out, first = tmp_path / "full", tmp_path / "first_checkpoint.pt"
    cmd = train_cmd(root, preset, out)
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK_TRAINING, str(ROOT / "tests"), str(out), str(first), *cmd[3:]],
        capture_output=True,
        text=True,
    )
    line = one_line_error(result, logged="[feed] ")
    assert result.stderr.strip().splitlines()[-1] == line  # the last word
    updates = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])["updates"]
    assert line == (
        f"nmt: error: {out / 'checkpoint.pt'}: {os.strerror(errno.ENOSPC)}: the training stopped; the last "
        f"checkpoint, {out / 'checkpoint.pt'} (the start of epoch 2, {updates} updates), is intact: make "
        "room and run the same command to resume from it"
    )
    assert (out / "checkpoint.pt").read_bytes() == first.read_bytes()
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")] and not (out / "model.pt").exists()
    resumed = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "resuming from" in resumed.stderr and "epoch 2, batch 0" in resumed.stderr
    assert_same_run(reference, final_state(out))


def test_a_curves_directory_that_cannot_be_written_is_one_warning_and_the_training_goes_on(workspace, tmp_path):
    root, preset = workspace
    out = tmp_path / "no_curves"
    out.mkdir()
    (out / CURVES_DIR).write_text("a file where the curves directory should be\n")
    result = subprocess.run(train_cmd(root, preset, out), capture_output=True, text=True, check=True)
    warnings = [line for line in result.stderr.splitlines() if "curves" in line]
    assert warnings == [
        f"[feed] live curves off: {out / CURVES_DIR}: a file where a directory should be; the "
        "training goes on (metrics.jsonl has every evaluation)"
    ]
    assert "Traceback" not in result.stderr and "b'" not in result.stderr
    assert_same_run(reference_run(root, preset), final_state(out))


from factories import StopAfter  # noqa: E402


def test_a_cuda_run_checkpoints_its_cuda_rng_state_and_restores_it_on_resume(workspace, tmp_path, monkeypatch):
    # No GPU here: the run computes on the CPU, nmt.models.io takes its device for a CUDA one, and torch.cuda's
    # generator functions are recorded (tests/unit/test_model_io.py: the same with real CUDA device objects).
    import nmt.training.run as train_module
    from nmt import config as cfg
    from nmt.models import io as model_io

    from stand_ins import FakeCudaRng

    root, preset = workspace
    config = cfg.system_config(
        cfg.load_params(root / "params.yaml", preset),
        cfg.load_table(root / "table.yaml"),
        "feed",
        str(root / "table.yaml"),
    )
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

    monkeypatch.setattr(train_module, "StopRequested", StopAfter(10**9))
    train_module.train(config, root / "prep", tmp_path / "term", device="cpu", progress=False)
    assert len(fake.sets) == 1  # restored once, where the epoch resumed, into the run's device
    assert fake.sets[0][0] == torch.device("cpu") and torch.equal(fake.sets[0][1], saved)
    assert_same_run(final_state(tmp_path / "whole"), final_state(tmp_path / "term"))


def test_epoch_check_trains_both_paths_once_per_seed(workspace, tmp_path):
    """`nmt bench train --epoch-check`: without dropout the fast and eager paths end the epoch at the same dev
    perplexity; with dropout their masks come from different generators, and each seed's pair is kept beside the
    means and the spread between seeds."""
    root, preset = workspace
    table = {
        **TABLE,
        "systems": {
            "feed": TABLE["systems"]["feed"],
            "feed_no_dropout": {"model": {**TABLE["systems"]["feed"]["model"], "dropout": 0.0}},
        },
    }
    table_path = tmp_path / "table.yaml"
    table_path.write_text(yaml.safe_dump(table))
    config = cfg.load_params(root / "params.yaml", preset)
    cpu = torch.device("cpu")
    same = epoch_check(
        config,
        root,
        str(table_path),
        "feed_no_dropout",
        root / "prep",
        device=cpu,
        threads=1,
        progress=lambda message: None,
    )
    assert same["seeds"] == [config["train"]["seed"]]
    assert same["dev_ppl_ratio"] == pytest.approx(1.0, abs=1e-4)

    check = epoch_check(
        config,
        root,
        str(table_path),
        "feed",
        root / "prep",
        device=cpu,
        threads=1,
        seeds=[1, 2],
        progress=lambda message: None,
    )
    assert check["seeds"] == [1, 2]
    for path in ("fast", "eager"):
        ppls = [run["dev_ppl"] for run in check[path]["runs"]]
        assert [run["seed"] for run in check[path]["runs"]] == [1, 2] and ppls[0] != ppls[1]
        assert check[path]["dev_ppl"] == pytest.approx(sum(ppls) / 2)
        assert check[path]["dev_ppl_spread"] == pytest.approx(max(ppls) / min(ppls) - 1)
    assert check["dev_ppl_ratio"] == pytest.approx(check["fast"]["dev_ppl"] / check["eager"]["dev_ppl"])


def prepared_by_heart(root: Path) -> None:
    """prep_small: 60 training pairs, which a 32-unit model learns by heart, so that its dev perplexity rises at
    the end (made once for the tests that need it)."""
    if not (root / "prep_small" / "dev.pt").exists():
        generate(root / "raw_small", seed=5, n_train=60, n_dev=30, n_test=5, n_align=5, max_len=15)
        prepare(
            root / "raw_small",
            root / "prep_small",
            splits=["train", "dev", "test"],
            src_lang="en",
            tgt_lang="de",
            max_len=15,
            src_vocab=300,
            tgt_vocab=300,
        )


def overfitting_preset(root: Path, name: str, epochs: int, **train) -> None:
    """A preset for prep_small: the unit preset at 32 units, `epochs` epochs at a fixed rate, and `train`'s keys."""
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["model"].update(hidden=32, embed=32)
    preset["train"].update(
        epochs=epochs, halve_after=epochs, lr=0.05, dropout_schedule={"epochs": epochs, "halve_after": epochs}, **train
    )
    (root / "presets" / f"{name}.yaml").write_text(yaml.safe_dump(preset))


def test_keep_best_keeps_the_best_evaluation_and_a_killed_run_resumes_to_it(workspace):
    """train.keep: best on a run whose dev perplexity rises at the end (60 training pairs, learnt by heart):
    model.pt holds the parameters of the evaluation with the lowest dev perplexity, among the epochs' ends and the
    evaluations every eval_every updates; evaluating changes nothing of the training itself; a run killed without
    warning resumes to the same files."""
    from nmt.models.io import load_models
    from nmt.scoring.likelihood import corpus_nll, perplexity

    root, _ = workspace
    prepared_by_heart(root)
    overfitting_preset(root, "unit_last", epochs=14)
    overfitting_preset(root, "unit_best", epochs=14, keep="best", eval_every=3)
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
    assert perplexity(*corpus_nll(model.eval(), dev_src, dev_tgt, 8, torch.device("cpu"))) == pytest.approx(
        kept["dev_ppl"], rel=1e-6
    )
    assert kept["dev_ppl"] < dev_ppls[-1]

    out = root / "best_killed"  # killed without warning once a best.pt and 5 epochs exist
    kill_when(
        train_cmd(root, "unit_best", out, "prep_small"),
        lambda: (out / "best.pt").exists() and epochs_recorded(out) >= 5,
        poll=0.005,
    )
    subprocess.run(train_cmd(root, "unit_best", out, "prep_small"), check=True, capture_output=True)
    assert_same_run(best, final_state(out))
    assert (out / "evaluations.jsonl").read_text() == (root / "best" / "evaluations.jsonl").read_text()


def test_the_best_evaluation_is_the_one_best_by_asks_for_where_perplexity_and_bleu_disagree():
    evaluations = [
        {"epoch": 1, "updates": 10, "dev_ppl": 9.0, "dev_bleu": 11.0},
        {"epoch": 2, "updates": 20, "dev_ppl": 7.5, "dev_bleu": 12.0},  # the lowest perplexity
        {"epoch": 3, "updates": 30, "dev_ppl": 7.9, "dev_bleu": 14.5},  # the highest BLEU
        {"epoch": 4, "updates": 40, "dev_ppl": 8.2, "dev_bleu": 14.5},
    ]  # a tie keeps the earlier one
    for best_by, expected in (("dev_ppl", 20), ("dev_bleu", 30), (None, 20)):  # None: keep last ranks by ppl too
        best = None
        for entry in evaluations:
            if better(entry, best, best_by):
                best = entry
        assert best["updates"] == expected, best_by


def test_keep_best_by_dev_bleu_keeps_the_highest_dev_bleu_and_a_killed_run_resumes_to_it(workspace):
    """train.best_by: dev_bleu: every evaluation greedily decodes the dev set and scores it; model.pt is the one with
    the highest dev BLEU, which `nmt translate --beam 1` of dev.src with it reproduces; metrics.jsonl records each
    epoch's; a run killed without warning resumes to the same files."""
    root, _ = workspace
    prepared_by_heart(root)
    overfitting_preset(root, "unit_bleu", epochs=10, keep="best", eval_every=4, best_by="dev_bleu")
    out = root / "bleu"
    subprocess.run(train_cmd(root, "unit_bleu", out, "prep_small"), check=True, capture_output=True)
    evaluations = [json.loads(line) for line in (out / "evaluations.jsonl").read_text().splitlines()]
    assert all("dev_bleu" in e for e in evaluations) and len({e["dev_bleu"] for e in evaluations}) > 1
    kept = max(evaluations, key=lambda e: (e["dev_bleu"], -e["updates"]))  # the first of the highest
    assert json.loads((out / "model.json").read_text())["kept"] == kept
    assert kept != min(evaluations, key=lambda e: e["dev_ppl"])  # this run overfits: the two rules disagree
    assert all("dev_bleu" in m for m in final_state(out)[0])
    hyp = root / "bleu_dev.hyp"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "translate",
            "--model",
            str(out / "model.pt"),
            "--src",
            str(root / "prep_small" / "dev.src"),
            "--out",
            str(hyp),
            "--beam",
            "1",
            "--batch-size",
            "8",
            "--threads",
            "1",
            "--device",
            "cpu",
        ],
        check=True,
        capture_output=True,
    )
    assert bleu_tokenized(hyp.read_text().splitlines(), (root / "prep_small" / "dev.tgt").read_text().splitlines())[
        0
    ] == pytest.approx(kept["dev_bleu"])

    killed = root / "bleu_killed"
    kill_when(
        train_cmd(root, "unit_bleu", killed, "prep_small"),
        lambda: (killed / "best.pt").exists() and epochs_recorded(killed) >= 4,
        poll=0.005,
    )
    subprocess.run(train_cmd(root, "unit_bleu", killed, "prep_small"), check=True, capture_output=True)
    assert_same_run(final_state(out), final_state(killed))
    assert (killed / "evaluations.jsonl").read_text() == (out / "evaluations.jsonl").read_text()


def test_a_second_training_into_the_same_directory_stops_at_once_and_the_first_finishes(workspace):
    root, preset = workspace
    reference = reference_run(root, preset)
    out = root / "shared"
    first = started_training(root, preset, out)
    first.send_signal(signal.SIGSTOP)  # paused, still holding its directory: the second starts while it trains
    try:
        second = subprocess.run(train_cmd(root, preset, out), capture_output=True, text=True, timeout=60)
    finally:
        first.send_signal(signal.SIGCONT)
    lines = second.stderr.strip().splitlines()
    assert second.returncode == 2 and len(lines) == 1, second.stderr
    assert lines[0] == (
        f"nmt: error: {out}: another training is writing here (pid {first.pid} on "
        f"{socket.gethostname()}); wait for it to end or stop it, then run this again"
    )
    assert first.wait(timeout=120) == 0
    assert_same_run(reference, final_state(out))
    # a lock left by a killed training holds nothing: the next one takes it over
    again = root / "killed"
    kill_when(train_cmd(root, preset, again), lambda: (again / "model.json").exists())
    assert (again / ".lock").exists()
    subprocess.run(train_cmd(root, preset, again), check=True, capture_output=True)
    assert_same_run(reference, final_state(again))
