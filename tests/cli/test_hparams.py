"""TensorBoard's HPARAMS tab: each training is a session with its system's settings beside its best dev perplexity
and its model's dev BLEU (nmt.training.curves), read back from the event file and from a running TensorBoard."""

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import api_pb2, metadata

from nmt.data.prepare import load_split
from nmt.decode.translate import translate_ids
from nmt.models.io import load_model
from nmt.scoring.bleu import bleu_tokenized
from nmt.training.curves import BEST_DEV_PPL, CURVES_DIR, DEV_BLEU, hparams_of

from training_runs import train_cmd


@pytest.fixture(scope="module")
def trained(workspace, tmp_path_factory):  # noqa: F811
    """One training with train.keep: best (model.pt the best evaluation's, as the presets keep it)."""
    root, _ = workspace
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["train"].update(keep="best", best_by="dev_ppl")
    (root / "presets" / "kept.yaml").write_text(yaml.safe_dump(preset))
    out = tmp_path_factory.mktemp("hparams") / "feed"
    subprocess.run(train_cmd(root, "kept", out), check=True, capture_output=True)
    return root, out


def events(out: Path) -> EventAccumulator:
    accumulator = EventAccumulator(str(out / CURVES_DIR))
    accumulator.Reload()
    return accumulator


def plain(value):
    """A google.protobuf Value as Python."""
    return getattr(value, value.WhichOneof("kind"))


def test_the_session_lists_the_system_s_settings_and_its_metrics(trained):
    _, out = trained
    config = json.loads((out / "model.json").read_text())["config"]
    content = events(out).PluginTagToContent(metadata.PLUGIN_NAME)
    start = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
    hparams = {name: plain(value) for name, value in start.hparams.items()}
    assert hparams == hparams_of("feed", config)
    assert hparams["system"] == "feed" and hparams["model.hidden"] == 16 and hparams["model.input_feed"] == "true"
    assert hparams["train.keep"] == "best" and hparams["train.init_from"] == "none"
    assert hparams["train.dropout_schedule"] == "{epochs: 3, halve_after: 1}"
    experiment = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
    assert [metric.name.tag for metric in experiment.metric_infos] == [BEST_DEV_PPL, DEV_BLEU]
    assert sorted(info.name for info in experiment.hparam_infos) == sorted(hparams)
    end = metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG])
    assert end.status == api_pb2.STATUS_SUCCESS


def test_the_metrics_are_the_best_dev_perplexity_and_model_pt_s_dev_bleu(trained):
    """The best dev perplexity so far after every evaluation; model.pt's dev BLEU (a greedy decode of the dev set,
    scored as nmt.scoring.bleu.bleu_tokenized does) at the end."""
    root, out = trained
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    accumulator = events(out)
    best = accumulator.Scalars(BEST_DEV_PPL)
    assert [point.step for point in best] == [m["updates"] for m in metrics]
    lowest = [min(m["dev_ppl"] for m in metrics[: i + 1]) for i in range(len(metrics))]
    assert [point.value for point in best] == pytest.approx(lowest, rel=1e-6)
    model, _, tgt_vocab, _ = load_model(out / "model.pt", "cpu")
    dev_src, _ = load_split(root / "prep" / "dev.pt")
    hyps = translate_ids(model, dev_src, beam=1, batch_size=8, max_len_ratio=2.0, device="cpu", progress=False)
    refs = (root / "prep" / "dev.tgt").read_text(encoding="utf-8").splitlines()
    expected = bleu_tokenized([" ".join(tgt_vocab.decode(h.tokens)) for h in hyps], refs)[0]
    [bleu] = accumulator.Scalars(DEV_BLEU)
    assert bleu.step == metrics[-1]["updates"] and bleu.value == pytest.approx(expected, rel=1e-6, abs=1e-6)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_tensorboard_shows_the_session_in_its_hparams_tab(trained):
    """`tensorboard --logdir` over the model directories: the hparams plugin is on, and its session table holds the
    training with its settings and both metrics."""
    _, out = trained
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tensorboard.main",
            "--logdir",
            str(out.parent),
            "--port",
            str(port),
            "--load_fast",
            "false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://localhost:{port}/data"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/plugins_listing", timeout=5) as response:
                    plugins = json.load(response)
                break
            except OSError:
                assert time.time() < deadline and server.poll() is None, "tensorboard did not start"
                time.sleep(0.5)
        assert plugins["hparams"]["enabled"]
        query = {
            "experimentName": "",
            "allowedStatuses": ["STATUS_SUCCESS"],
            "colParams": [],
            "startIndex": 0,
            "sliceSize": 10,
        }
        for _ in range(60):  # the event files are read in the background after the start
            groups = post(f"{base}/plugin/hparams/session_groups", query)["sessionGroups"]
            if groups:
                break
            time.sleep(0.5)
        [group] = groups
        assert group["hparams"]["system"] == "feed" and group["hparams"]["model.hidden"] == 16
        assert {metric["name"]["tag"] for metric in group["metricValues"]} == {BEST_DEV_PPL, DEV_BLEU}
    finally:
        server.terminate()
        server.wait(timeout=30)
