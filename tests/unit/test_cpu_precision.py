"""`train.precision: auto` on a CPU (nmt.engine.cpu_precision): bf16 only where measured faster, the decision cached per
machine and model, and a training that measured first the same as one that read the cache."""

import json
import time

import pytest
import torch

from nmt import config as cfg
from nmt.base.timing import interleaved_medians
from nmt.data.vocab import PAD_ID
from nmt.engine import cpu_precision
from nmt.engine.update_timing import random_batch
from nmt.models.io import load_checkpoint
from nmt.training.run import train

from factories import model_config
from step_settings import train_settings
from training_runs import assert_same_run, final_state

MODEL = model_config(without=("window",), embed=16, reverse=False, max_src_len=20, arch="luong")
TRAIN = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, init_range=0.1, batch_size=8, precision="auto")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NMT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fake_timings(monkeypatch, fp32_ms, bf16_ms):
    """time_updates replaced by fixed medians; returns the list of its calls."""
    calls = []

    def timed(model_cfg, train_cfg, src_vocab, tgt_vocab, length, *, paths, **kwargs):
        calls.append(paths)
        return {"fp32": (fp32_ms, 5), "bf16": (bf16_ms, 5)}, {}, train_cfg.batch_size

    monkeypatch.setattr(cpu_precision, "time_updates", timed)
    return calls


@pytest.mark.parametrize(
    "fp32_ms, bf16_ms, chosen",
    [(30.0, 20.0, "bf16"), (30.0, 28.0, "fp32"), (10.0, 40.0, "fp32")],
    ids=["bf16-1.5x", "bf16-near-tie", "bf16-slower"],
)
def test_auto_takes_bf16_only_when_measured_at_least_margin_faster_and_measures_once(
    cache, monkeypatch, fp32_ms, bf16_ms, chosen
):
    monkeypatch.setattr(cpu_precision, "native_bf16", lambda: True)
    calls = fake_timings(monkeypatch, fp32_ms, bf16_ms)
    cpu = torch.device("cpu")
    first = cpu_precision.resolve(MODEL, TRAIN, 50, 60, 12, cpu)
    assert first[0] == chosen and f"{fp32_ms / bf16_ms:.2f}x" in first[1]
    assert cpu_precision.resolve(MODEL, TRAIN, 50, 60, 12, cpu) == first  # from the cache
    assert calls == [{"fp32": {"precision": "fp32"}, "bf16": {"precision": "bf16"}}]
    cpu_precision.resolve({**MODEL, "hidden": 32}, TRAIN, 50, 60, 12, cpu)  # another model: measured again
    assert len(calls) == 2 and len(list(cache.glob("precision/*/decision.json"))) == 2


def test_auto_is_fp32_without_native_bf16_and_explicit_settings_are_never_measured(cache, monkeypatch):
    calls = fake_timings(monkeypatch, 30.0, 10.0)
    cpu = torch.device("cpu")
    monkeypatch.setattr(cpu_precision, "native_bf16", lambda: False)
    assert cpu_precision.resolve(MODEL, TRAIN, 50, 60, 12, cpu) == ("fp32", "no native bf16 products on this CPU")
    monkeypatch.setattr(cpu_precision, "native_bf16", lambda: True)
    for train_cfg, device in [
        (TRAIN.replace(precision="fp32"), cpu),
        (TRAIN.replace(precision="bf16"), cpu),
        (TRAIN.replace(engine="eager"), cpu),
        (TRAIN, torch.device("cuda")),
    ]:
        assert cpu_precision.resolve(MODEL, train_cfg, 50, 60, 12, device) == (train_cfg.precision, None)
    assert calls == []


def test_native_bf16_reads_the_processor_flags(monkeypatch):
    for flags, native in [
        ("flags : fpu avx512f avx512_bf16", True),
        ("flags : fpu amx_bf16 amx_tile", True),
        ("Features : fp asimd bf16 i8mm", True),
        ("flags : fpu avx2 avx512f avx512bw", False),
    ]:
        monkeypatch.setattr(cpu_precision.compiled, "processor", lambda flags=flags: flags)
        assert cpu_precision.native_bf16() is native, flags


def run_config(root, preset):
    config = cfg.load_params(root / "params.yaml", preset)
    table = cfg.load_table(root / "table.yaml")
    return cfg.system_config(config, table, "feed", str(root / "table.yaml"))


def test_a_training_that_measured_equals_one_that_read_the_decision(workspace, cache, monkeypatch):  # noqa: F811
    """The measurement (real updates of a copy of the model, inside fork_rng; every epoch reseeds as well) leaves the
    training as if nothing had been measured. The precision is recorded in model.json and in the checkpoint, from
    which a resumed run takes it."""
    root, preset = workspace
    monkeypatch.setattr(cpu_precision, "native_bf16", lambda: True)  # whatever this CPU is: measure
    config = run_config(root, preset)
    config["train"].update(epochs=1, dropout_schedule={"epochs": 1, "halve_after": 1}, plateau=None)
    train(config, root / "prep", root / "measured", threads=1, device="cpu", progress=False)
    decisions = list(cache.glob("precision/*/decision.json"))
    assert len(decisions) == 1
    decision = json.loads(decisions[0].read_text())
    assert decision["precision"] in ("fp32", "bf16") and decision["fp32_ms"] > 0 and decision["bf16_ms"] > 0
    train(config, root / "prep", root / "cached", threads=1, device="cpu", progress=False)
    assert_same_run(final_state(root / "measured"), final_state(root / "cached"))
    meta = json.loads((root / "cached" / "model.json").read_text())
    assert meta["precision"] == decision["precision"]
    assert load_checkpoint(root / "cached" / "checkpoint.pt")["state"]["precision"] == decision["precision"]


def test_the_decision_is_timed_in_cpu_time_so_other_jobs_on_the_machine_do_not_decide_it(cache, monkeypatch):
    """A call that waits (as an update does when another job holds the core) costs wall time but no CPU time: in CPU
    time the waiting path is not slower. cpu_precision times its updates that way."""

    def busy():
        t0 = time.process_time()
        while time.process_time() - t0 < 0.002:
            pass

    def waiting():
        busy()
        time.sleep(0.01)

    fns = {"busy": busy, "waiting": waiting}
    wall = interleaved_medians(fns, min_time=0.0, min_samples=5, warmup=1)
    cpu = interleaved_medians(fns, min_time=0.0, min_samples=5, warmup=1, clock=time.process_time)
    # the sleep costs at least 10 ms of wall time, however loaded the machine; other jobs may stretch the busy
    # path's wall time too (8.6 ms for 2 ms of CPU in a CI run), so the wall times are not compared with each other
    assert wall["waiting"][0] >= 10
    assert cpu["waiting"][0] < 5 and cpu["waiting"][0] < cpu["busy"][0] * 1.5
    clocks = []
    monkeypatch.setattr(cpu_precision, "native_bf16", lambda: True)

    def timed(*args, clock, **kwargs):
        clocks.append(clock)
        return {"fp32": (2.0, 8), "bf16": (1.0, 8)}, {}, 8

    monkeypatch.setattr(cpu_precision, "time_updates", timed)
    assert cpu_precision.resolve(MODEL, TRAIN, 50, 60, 12, torch.device("cpu"))[0] == "bf16"
    assert clocks == [time.process_time]


def test_the_timed_batches_have_sentences_of_unequal_length_like_a_training_batch():
    """Equal lengths hid bf16's cost on a CPU (packed sequences of unequal lengths): the measurement's batches spread
    like bucketed ones, with exactly batch x length target positions (the benchmarks' token count)."""
    for length in (2, 12, 16, 40):
        batch = random_batch(9, length, 50, 60, torch.device("cpu"))
        assert len(set(batch.src_len.tolist())) > 1, length
        assert int((batch.tgt_out != PAD_ID).sum()) == 9 * length
        assert batch.tgt_out.size(1) > length and batch.src.size(1) > length
