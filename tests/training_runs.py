"""The small training set-up the training tests share (tests/cli/test_train.py and the tests that import from here):
a synthetic corpus prepared once per module, a one-system table and preset, the `nmt train` command line, and what a
finished run holds."""

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
from nmt.models.io import read_model_file

ROOT = Path(__file__).resolve().parents[1]

TABLE = {
    "id": "t",
    "title": "t",
    "paper": "p",
    "task": "en-de",
    "testset": "test",
    "columns": ["ppl"],
    "rows": [{"label": "feed", "system": "feed", "paper": {}}],
    "systems": {
        "feed": {
            "model": {"attention": "global", "score": "general", "input_feed": True, "reverse": True, "dropout": 0.2}
        },
    },
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    generate(root / "raw", seed=3, n_train=400, n_dev=30, n_test=30, n_align=5, max_len=15)
    prepare(
        root / "raw",
        root / "prep",
        splits=["train", "dev", "test"],
        src_lang="en",
        tgt_lang="de",
        max_len=15,
        src_vocab=300,
        tgt_vocab=300,
    )
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["presets_dir"] = str(root / "presets")
    params["tables"] = [str(root / "table.yaml")]
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    preset = yaml.safe_load((ROOT / "workflow/presets/tiny.yaml").read_text())
    preset["model"].update(layers=1, hidden=16, embed=16)
    # the fixed schedule, model.pt the last parameters (the tiny preset's plateau rule and keep: best are tested below)
    preset["train"].update(
        epochs=3,
        halve_after=1,
        batch_size=8,
        dropout_schedule={"epochs": 3, "halve_after": 1},
        plateau=None,
        keep="last",
    )
    (root / "table.yaml").write_text(yaml.safe_dump(TABLE))
    (root / "presets").mkdir()
    (root / "presets" / "unit.yaml").write_text(yaml.safe_dump(preset))
    return root, "unit"


def train_cmd(root, preset, out, data="prep"):
    return [
        sys.executable,
        "-m",
        "nmt.cli",
        "train",
        "--params",
        str(root / "params.yaml"),
        "--preset",
        preset,
        "--table",
        str(root / "table.yaml"),
        "--system",
        "feed",
        "--data",
        str(root / data),
        "--out",
        str(out),
        "--threads",
        "1",
    ]


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
