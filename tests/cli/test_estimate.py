"""`nmt bench train` and `nmt estimate`: the arithmetic against a hand computation, where sizes come from, stale
measurements refused, and the commands end to end on the tiny preset."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nmt import config as cfg
from nmt.bench.estimate import (
    claim_costs,
    estimate,
    format_claim_costs,
    format_estimate,
    measure_throughput,
    preset_systems,
    training_size,
)

from factories import model_config
from step_settings import train_settings

ROOT = Path(__file__).resolve().parents[2]


def tiny_config(**task_extra):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    config["data"]["tasks"]["en-de"].update(task_extra)
    return config


def write_prep(data_root: Path, sentences: int, tgt_tokens: int, src_vocab=104, tgt_vocab=108):
    """prep.json of every task of the tiny preset (en-de for Tables 1/2/4, de-en for Table 3, en-vi for Raffel's
    Table 4)."""
    for task in ("en-de", "de-en", "en-vi"):
        prep = data_root / task / "prepared" / "prep.json"
        prep.parent.mkdir(parents=True)
        prep.write_text(
            json.dumps(
                {
                    "src_vocab": src_vocab,
                    "tgt_vocab": tgt_vocab,
                    "splits": {"train": {"sentences": sentences, "tgt_tokens": tgt_tokens}},
                }
            )
        )


def measured_estimate(tmp_path) -> tuple[list[dict], dict]:
    """The tiny preset's systems on 1,000 prepared training pairs of 9,000 words, every one measured at 2.5 target
    tokens/s, and the estimate from that."""
    config = tiny_config()
    write_prep(tmp_path, sentences=1000, tgt_tokens=9000)
    systems = preset_systems(config, ROOT, tmp_path)
    bench = {
        "preset": "tiny",
        "device": "test",
        "device_type": "cuda",
        "torch": "x",
        "date": "d",
        "measurements": {s["key"]: {"tgt_tokens_per_s": 2.5} for s in systems},
    }
    return systems, estimate(config, ROOT, tmp_path, bench)


def test_hours_are_epochs_times_tokens_over_measured_throughput(tmp_path):
    systems, result = measured_estimate(tmp_path)
    # 14 En->De and 4 De->En Luong systems, 4 + 4 RNNsearch (Peter Table 1), the follow-up's 1, Raffel's 3
    assert result["systems"] == 30 == len(result["rows"]) == len(systems)
    for row, system in zip(result["rows"], systems):
        # 9000 words + one </s> for each of the 1000 sentences, at 2.5 tokens/s
        assert row["tgt_tokens_per_epoch"] == 10_000
        assert row["hours"] == pytest.approx(system["epochs"] * 10_000 / 2.5 / 3600)
    assert result["total_hours"] == pytest.approx(sum(r["hours"] for r in result["rows"]))


def test_the_seeds_that_would_decide_a_claim_are_priced_from_its_systems_hours(tmp_path):
    _, result = measured_estimate(tmp_path)
    hours = {(r["task"], r["system"]): r["hours"] for r in result["rows"]}
    doc = {
        "preset": "tiny",
        "claims": [
            {
                "id": "needs-14",
                "seeds_needed": 14,
                "n_runs": {"a": 3, "b": 3},
                "trained": [
                    {"pair": "en-de", "system": "global_location"},
                    {"pair": "en-de", "system": "base_reverse"},
                    {"pair": "en-de", "system": "base_reverse"},
                ],
            },  # a system named twice is trained once
            {"id": "decided", "seeds_needed": None, "n_runs": {"a": 3}, "trained": []},
        ],
    }
    costs = claim_costs(result, doc)
    per_seed = hours[("en-de", "global_location")] + hours[("en-de", "base_reverse")]
    assert [c["id"] for c in costs["claims"]] == ["needs-14"]
    claim = costs["claims"][0]
    assert claim["hours"] == pytest.approx(14 * per_seed) and claim["extra_hours"] == pytest.approx(11 * per_seed)
    assert costs["most_seeds"] == 14
    assert costs["preset_hours_at_most_seeds"] == pytest.approx(14 * result["total_hours"])
    assert "needs-14" in format_claim_costs(costs, "GPU-hours")
    # the range of the seeds needed, and a single run's assumed spread between seeds, come along and are said
    doc["claims"][0]["seeds_needed_range"] = [9, 31]
    doc["claims"].append(
        {
            "id": "one-run",
            "seeds_needed": 5,
            "seeds_needed_range": None,
            "assumed_seed_ratio": 1.0,
            "n_runs": {"a": 1},
            "trained": [{"pair": "en-de", "system": "base_reverse"}],
        }
    )
    costs = claim_costs(result, doc)
    assert [(c["seeds_needed_range"], c["assumed_seed_ratio"]) for c in costs["claims"]] == [
        ([9, 31], None),
        (None, 1.0),
    ]
    text = format_claim_costs(costs, "GPU-hours")
    assert "  9-31" in text and "assumed (single run, ratio 1)" in text and "an assumption, not a measurement" in text
    with pytest.raises(cfg.ConfigError, match="preset 'demo'"):
        claim_costs(result, {**doc, "preset": "demo"})
    # a claim on a system the preset does not train: another run's claims file, not a system left unmeasured
    doc["claims"].append(
        {
            "id": "elsewhere",
            "seeds_needed": 4,
            "n_runs": {"a": 1},
            "trained": [{"pair": "en-de", "system": "transformer_big"}],
        }
    )
    with pytest.raises(
        cfg.ConfigError, match="claim elsewhere rests on en-de/transformer_big, which preset 'tiny' does not train"
    ):
        claim_costs(result, doc)


def test_systems_that_differ_only_in_reversal_share_a_measurement(tmp_path):
    write_prep(tmp_path, 10, 100)
    keys = {s["system"]: s["key"] for s in preset_systems(tiny_config(), ROOT, tmp_path)}
    assert keys["base"] == keys["base_reverse"]
    assert (
        len(
            {
                keys["base"],
                keys["base_reverse_dropout"],
                keys["global_location"],
                keys["global_location_feed"],
                keys["local_p_general_feed"],
            }
        )
        == 5
    )


def test_size_comes_from_the_preset_until_the_data_is_prepared(tmp_path):
    # before anything is generated or fetched: the sentences the preset states, their words from the throughput file
    stated = training_size(tiny_config(), "en-de", tmp_path)
    assert (stated["pairs"], stated["tgt_words"]) == (1000, None) and "n_train" in stated["source"]
    assert training_size(tiny_config(max_train=300), "en-de", tmp_path)["pairs"] == 300
    with pytest.raises(cfg.ConfigError, match=r"no training-data size.*data\.tasks\.en-de\.size"):
        training_size(tiny_config(n_train=None), "en-de", tmp_path)
    size = training_size(
        tiny_config(size={"train_pairs": 7, "train_tgt_words": 70, "source": "a paper"}), "en-de", tmp_path
    )
    assert (size["pairs"], size["tgt_words"]) == (7, 70) and "a paper" in size["source"]
    assert size["tgt_vocab"] == cfg.load_params(ROOT / "params.yaml", "tiny")["prepare"]["tgt_vocab"] + 4
    write_prep(tmp_path, 10, 100)
    assert training_size(tiny_config(), "en-de", tmp_path)["pairs"] == 10


def test_a_measurement_of_another_model_is_not_used(tmp_path):
    write_prep(tmp_path, 10, 100)
    config = tiny_config()
    bench = {
        "preset": "tiny",
        "device": "t",
        "device_type": "cpu",
        "torch": "x",
        "date": "d",
        "measurements": {s["key"]: {"tgt_tokens_per_s": 1.0} for s in preset_systems(config, ROOT, tmp_path)},
    }
    config["model"]["hidden"] *= 2  # the Luong systems' size; RNNsearch has its recipe's
    rows = {(r["task"], r["system"]): r for r in estimate(config, ROOT, tmp_path, bench)["rows"]}
    assert rows[("en-de", "global_location_feed")]["hours"] is None
    assert rows[("de-en", "rnnsearch")]["hours"] is not None
    for task in ("en-de", "de-en", "en-vi"):  # other vocabularies: no system is measured any more
        (tmp_path / task / "prepared" / "prep.json").unlink()
        (tmp_path / task / "prepared").rmdir()
    write_prep(tmp_path, 10, 100, src_vocab=204)
    with pytest.raises(cfg.ConfigError, match="changed since the throughput was measured"):
        estimate(tiny_config(), ROOT, tmp_path, bench)
    with pytest.raises(cfg.ConfigError, match="measured for preset 'tiny', not 'demo'"):
        estimate(cfg.load_params(ROOT / "params.yaml", "demo"), ROOT, tmp_path, bench)


def test_systems_left_unmeasured_are_named_and_kept_out_of_every_total(tmp_path):
    write_prep(tmp_path, sentences=1000, tgt_tokens=9000)
    config = tiny_config()
    systems = preset_systems(config, ROOT, tmp_path)
    measured_key = next(s["key"] for s in systems if s["system"] == "global_location_feed")
    bench = {
        "preset": "tiny",
        "device": "test",
        "device_type": "cuda",
        "torch": "x",
        "date": "d",
        "measurements": {measured_key: {"tgt_tokens_per_s": 2.5}},
    }
    result = estimate(config, ROOT, tmp_path, bench)
    measured = [r for r in result["rows"] if r["hours"] is not None]
    assert {(r["task"], r["system"]) for r in measured} == {
        (s["task"], s["system"]) for s in systems if s["key"] == measured_key
    }
    assert result["measured_systems"] == len(measured) < result["systems"]
    assert result["total_hours"] == pytest.approx(sum(r["hours"] for r in measured))
    by_table = {t["table"]: t for t in result["tables"]}
    for table, entry in by_table.items():
        rows = [r for r in result["rows"] if r["table"] == table]
        assert entry["runs"] == len(rows) and entry["measured"] == sum(r["hours"] is not None for r in rows)
        assert entry["hours"] == pytest.approx(sum(r["hours"] or 0 for r in rows))
    text = format_estimate(result)
    assert f"for the {len(measured)} measured, {result['systems'] - len(measured)} not measured" in text
    assert any(line.startswith("en-de/base ") and line.endswith("not measured") for line in text.splitlines())


def test_throughput_is_measured_with_real_training_updates():
    model = model_config(without=("window",), hidden=8, reverse=False)
    train = train_settings(optimizer="adam", lr=0.01, batch_size=4, clip_norm=5.0, init_range=0.1)
    result = measure_throughput(
        model, train, 20, 30, 6, updates=3, warmup=1, device=torch.device("cpu"), compare_eager=True
    )
    assert result["updates"] >= 3 and result["seconds_per_update"] > 0
    assert result["tokens_per_s"] == pytest.approx(4 * 6 / result["seconds_per_update"])
    assert result["engine"] == "fast" and result["precision"] == "fp32"
    # the plain eager fp32 path, timed in turn with it
    assert result["eager_tokens_per_s"] == pytest.approx(4 * 6 / result["eager_seconds_per_update"])
    assert result["speedup"] == pytest.approx(result["tokens_per_s"] / result["eager_tokens_per_s"])


def test_bench_and_estimate_commands_end_to_end(tmp_path):
    write_prep(tmp_path / "data", 100, 800)
    bench = tmp_path / "tp.json"

    def nmt(*args):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "nmt.cli",
                *args,
                "--params",
                str(ROOT / "params.yaml"),
                "--preset",
                "tiny",
                "--data",
                str(tmp_path / "data"),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    nmt("bench", "train", "--updates", "2", "--warmup", "1", "--threads", "1", "--device", "cpu", "--out", str(bench))
    measured = json.loads(bench.read_text())
    distinct = {s["key"] for s in preset_systems(tiny_config(), ROOT, tmp_path / "data")}
    assert measured["device_type"] == "cpu" and set(measured["measurements"]) == distinct
    out = nmt("estimate", "--throughput", str(bench), "--json", str(tmp_path / "est.json"))
    assert "preset tiny: 30 systems to train" in out and "CPU-hours" in out and "nmt bench train" in out
    assert len(json.loads((tmp_path / "est.json").read_text())["rows"]) == 30


def test_bench_translate_times_greedy_and_beam_at_batch_1_and_64_beside_the_eager_path(tmp_path):
    """`nmt bench translate` on the tiny preset: one measurement per distinct decoding cost, target foresight models
    (which cannot translate) left out, every speed a positive number of sentences per second."""
    write_prep(tmp_path / "data", 100, 800)
    out = tmp_path / "translate.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "bench",
            "translate",
            "--params",
            str(ROOT / "params.yaml"),
            "--preset",
            "tiny",
            "--data",
            str(tmp_path / "data"),
            "--device",
            "cpu",
            "--threads",
            "1",
            "--compare-eager",
            "--min-time",
            "0.01",
            "--out",
            str(out),
            "--systems",
            "global_general_feed",
            "rnnsearch",
            "rnnsearch_tf_guided",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["device_type"] == "cpu" and result["compare_eager"] and result["beam"] == 2
    systems = sorted(s for m in result["measurements"].values() for s in m["systems"])
    assert systems == ["de-en/rnnsearch", "en-de/global_general_feed", "en-de/rnnsearch"]
    assert len(result["measurements"]) == 2  # both tasks' rnnsearch: the same model and vocabulary sizes
    for measurement in result["measurements"].values():
        for prefix in ("", "eager_"):
            for search in ("greedy", "beam"):
                for batch in (1, 64):
                    assert measurement[f"{prefix}{search}_sentences_per_s_batch{batch}"] > 0


def test_nmt_estimate_defaults_to_the_presets_committed_throughput(tmp_path):
    """docs/presets.md's `nmt estimate --preset small` runs as written: the committed
    benchmarks/throughput-small-cpu.json on a machine without a GPU, said on stderr; a preset without one says what
    to do in one line."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    done = subprocess.run(
        [sys.executable, "-m", "nmt.cli", "estimate", "--preset", "small"], cwd=ROOT, capture_output=True, text=True
    )
    if device == "cpu":
        assert done.returncode == 0, done.stderr
        assert done.stderr == "nmt: throughput from benchmarks/throughput-small-cpu.json (--throughput gives another)\n"
        given = subprocess.run(
            [
                sys.executable,
                "-m",
                "nmt.cli",
                "estimate",
                "--preset",
                "small",
                "--throughput",
                "benchmarks/throughput-small-cpu.json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert given.stdout == done.stdout
    none = subprocess.run(
        [sys.executable, "-m", "nmt.cli", "estimate", "--preset", "small-gpu"], cwd=ROOT, capture_output=True, text=True
    )
    assert none.returncode == 2 and none.stderr.startswith(
        f"nmt: error: preset 'small-gpu': no benchmarks/throughput-small-gpu-{device}.json"
    )
