"""Model and checkpoint files (nmt.models.io): plain data that torch.load(weights_only=True) reads, one-line errors
for every file it cannot or will not read, and the RNG states (CPU, and the CUDA one on a GPU) of a checkpoint."""

import errno
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from nmt.cli import main
from nmt.config import ConfigError
from nmt.data.vocab import Vocab
from nmt.engine.train_step import make_optimizer
from nmt.models import io as model_io
from nmt.models.io import (
    load_checkpoint,
    load_model,
    plain,
    read_init_from,
    restore_rng_states,
    rng_states,
    save_checkpoint,
    save_model,
)

from factories import SRC_WORDS, TGT_WORDS, make_model, model_config
from stand_ins import FakeCudaRng, FullDisk
from step_settings import train_settings

MODEL_CFG = model_config()  # make_model's default configuration; a copy, so that what a test hands on is its own


def write_model(path: Path, **config_extra) -> Path:
    config = {"model": dict(MODEL_CFG), "translate": {"beam": 2}, **config_extra}
    save_model(path, make_model(train=True), Vocab(SRC_WORDS), TGT_WORDS, config, system=path.stem)
    return path


class Evil:
    """Unpickling it would create a file: what a model file from elsewhere could do if nmt unpickled objects."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_model_file_is_plain_data_and_loads_back(tmp_path):
    path = write_model(
        tmp_path / "m.pt", extra={"ratio": np.float64(0.5), "steps": np.int64(3), "shape": (1, 2), "where": Path("a/b")}
    )
    blob = torch.load(path, weights_only=True)  # what every reader does (nmt.models.io.read_file)
    assert sorted(blob) == ["config", "config_version", "model", "model_config", "src_vocab", "system", "tgt_vocab"]
    assert blob["config"]["extra"] == {"ratio": 0.5, "steps": 3, "shape": [1, 2], "where": "a/b"}
    assert type(blob["config"]["extra"]["ratio"]) is float and type(blob["config"]["extra"]["steps"]) is int
    assert blob["src_vocab"] == Vocab(SRC_WORDS).itos and blob["system"] == "m"
    model, src_vocab, tgt_vocab, config = load_model(path, "cpu")
    assert src_vocab.itos == Vocab(SRC_WORDS).itos and tgt_vocab.itos == Vocab(TGT_WORDS).itos
    assert config["translate"] == {"beam": 2} and not model.training and model.source_path == str(path)
    reference = make_model(train=True).state_dict()
    assert all(torch.equal(reference[k], v) for k, v in model.state_dict().items())


def test_plain_refuses_objects_naming_where_they_are():
    assert plain({"a": (1, np.bool_(True)), "b": None, "t": torch.ones(1)})["a"] == [1, True]
    with pytest.raises(TypeError, match=r"state\.metrics\[1\]\.lr: a builtins\.object cannot go into"):
        plain({"metrics": [{"lr": 1.0}, {"lr": object()}]}, "state")
    with pytest.raises(TypeError, match=r"config: key \('a', 1\) is a tuple"):
        plain({("a", 1): 2}, "config")


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "adadelta"])
def test_checkpoint_with_each_optimizer_loads_with_weights_only(tmp_path, optimizer):
    model = make_model(train=True)
    opt = make_optimizer(model.parameters(), train_settings(optimizer=optimizer, lr=0.1))
    sum(p.sum() for p in model.parameters()).backward()
    opt.step()
    state = {
        "epoch": 2,
        "batch": 3,
        "updates": 9,
        "loss_sum": np.float32(1.5),
        "tokens": np.int64(40),
        "metrics": [{"epoch": 1, "lr": 0.1, "dev_ppl": np.float64(12.5)}],
        **rng_states("cpu"),
    }
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, {"model": MODEL_CFG, "train": {"seed": 1}}, model, opt, state)
    loaded = torch.load(path, weights_only=True)
    assert sorted(loaded) == ["config", "config_version", "model", "optimizer", "state"]
    ckpt = load_checkpoint(path)
    assert ckpt["state"]["metrics"] == [{"epoch": 1, "lr": 0.1, "dev_ppl": 12.5}]
    assert type(ckpt["state"]["tokens"]) is int and type(ckpt["state"]["loss_sum"]) is float
    assert ckpt["state"]["rng"].dtype == torch.uint8 and ckpt["state"]["cuda_rng"] is None
    fresh = make_optimizer(make_model(1, train=True).parameters(), train_settings(optimizer=optimizer, lr=0.1))
    fresh.load_state_dict(ckpt["optimizer"])  # the optimiser's state comes back whole
    assert fresh.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    # a value that is not plain data fails before anything is written
    with pytest.raises(TypeError, match=r"state\.extra"):
        save_checkpoint(tmp_path / "other.pt", {}, model, opt, {**state, "extra": object()})
    assert not (tmp_path / "other.pt").exists()


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Files nmt must not or cannot load as a model, with what their one-line error says."""
    good = write_model(tmp_path / "good.pt")
    files = {}
    path = tmp_path / "pickled.pt"  # as a writer that kept numpy scalars in the config would have written it
    torch.save({**torch.load(good, weights_only=True), "config": {"lr": np.float64(1.0)}}, path)
    files["numpy"] = (
        path,
        r"refused: it holds a pickled numpy\.\S*scalar \(written by other software or an older "
        r"nmt\)",
    )
    path = tmp_path / "evil.pt"
    torch.save({"model": Evil(tmp_path / "ran")}, path)
    torch.load(path, weights_only=False)  # what loading it the old way did: run its code
    assert (tmp_path / "ran").exists()
    (tmp_path / "ran").unlink()
    files["object"] = (path, r"refused: it holds a pickled \S*open .* no file can run code")
    path = tmp_path / "truncated.pt"
    data = good.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    files["truncated"] = (path, r"not a readable model file \(truncated, corrupt")
    (tmp_path / "empty.pt").write_bytes(b"")
    files["empty"] = (tmp_path / "empty.pt", "not a readable model file")
    (tmp_path / "text.pt").write_text("hello\n")
    files["text"] = (tmp_path / "text.pt", "not a readable model file")
    path = tmp_path / "plain_pickle.pt"
    path.write_bytes(pickle.dumps({"model": 1}))
    files["pickle"] = (path, "not a model file|refused")
    path = tmp_path / "foreign.pt"
    torch.save({"state_dict": {"w": torch.ones(1)}}, path)
    files["foreign"] = (path, r"not a model file written by nmt train \(it has no model_config, model, src_vocab")
    files["missing"] = (tmp_path / "missing.pt", r"no such file; give a model.pt that `nmt train` wrote")
    # readable files whose payload or keys are not what nmt writes: refused at the boundary, naming the key
    blob = torch.load(good, weights_only=True)
    last = len(blob["src_vocab"]) - 1
    for kind, content, message in (
        ("payload", [blob], r"not a model file written by nmt train \(it holds a list, not a dict\)"),
        (
            "vocabulary",
            {**blob, "tgt_vocab": " ".join(blob["tgt_vocab"])},
            r"not a model file written by nmt train \(its tgt_vocab is a str, not a list of words\)",
        ),
        (
            "word",
            {**blob, "src_vocab": blob["src_vocab"][:-1] + [7]},
            rf"\(its src_vocab\[{last}\] is an int, not a word \(a string\)\)",
        ),
        (
            "parameters",
            {**blob, "model": {**blob["model"], "extra": [1.0]}},
            r"\(its model is not a state dict \('extra' holds a list, not a tensor\)\)",
        ),
        ("config", {**blob, "config": "beam: 2"}, r"\(its config is a str, not a dict\)"),
        ("version", {**blob, "config_version": "2"}, r"\(its config_version is a str, not an integer\)"),
    ):
        torch.save(content, tmp_path / f"{kind}.pt")
        files[kind] = (tmp_path / f"{kind}.pt", message)
    return files


def test_a_file_that_is_not_a_plain_nmt_model_is_one_line_config_error_and_runs_nothing(tmp_path):
    for kind, (path, message) in bad_files(tmp_path).items():
        with pytest.raises(ConfigError, match=message) as info:
            load_model(path, "cpu")
        text = str(info.value)
        assert text.startswith(f"{path}:") and "\n" not in text, (kind, text)
        assert "nmt train" in text, (kind, text)  # says what to do
    assert not (tmp_path / "ran").exists()  # the pickled object's code never ran


def test_the_commands_report_a_refused_model_file_in_one_line_with_status_2(tmp_path, capsys):
    files = bad_files(tmp_path)
    (tmp_path / "a.src").write_text("s1 s2\n")
    (tmp_path / "a.tgt").write_text("t1 t2\n")
    for kind in ("object", "truncated", "missing", "payload", "vocabulary", "word"):
        path = files[kind][0]
        capsys.readouterr()
        assert (
            main(
                [
                    "translate",
                    "--model",
                    str(path),
                    "--src",
                    str(tmp_path / "a.src"),
                    "--out",
                    str(tmp_path / "out.txt"),
                    "--device",
                    "cpu",
                ]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert err.startswith(f"nmt: error: {path}:") and err.count("\n") == 1, err
        assert (
            main(
                [
                    "evaluate",
                    "--hyp",
                    str(tmp_path / "a.tgt"),
                    "--ref",
                    str(tmp_path / "a.tgt"),
                    "--src",
                    str(tmp_path / "a.src"),
                    "--model",
                    str(path),
                    "--out",
                    str(tmp_path / "s.json"),
                    "--system",
                    "x",
                    "--testset",
                    "test",
                    "--preset-name",
                    "p",
                    "--pair",
                    "en-de",
                    "--device",
                    "cpu",
                ]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert err.startswith(f"nmt: error: {path}:") and err.count("\n") == 1, err
    assert not (tmp_path / "ran").exists()
    # and a model that nmt train wrote gives its perplexity
    assert (
        main(
            [
                "evaluate",
                "--hyp",
                str(tmp_path / "a.tgt"),
                "--ref",
                str(tmp_path / "a.tgt"),
                "--src",
                str(tmp_path / "a.src"),
                "--model",
                str(tmp_path / "good.pt"),
                "--lang",
                "de",
                "--out",
                str(tmp_path / "s.json"),
                "--system",
                "x",
                "--testset",
                "test",
                "--preset-name",
                "p",
                "--pair",
                "en-de",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "s.json").read_text())["ppl"] > 1


def test_init_from_reads_a_model_or_a_checkpoint_and_names_its_key_when_it_cannot(tmp_path):
    model_file = write_model(tmp_path / "model.pt")
    found = read_init_from(model_file)
    assert found["model_config"] == MODEL_CFG and found["src_vocab"] == Vocab(SRC_WORDS).itos
    model = make_model(train=True)
    opt = make_optimizer(model.parameters(), train_settings(optimizer="sgd", lr=0.1))
    save_checkpoint(tmp_path / "checkpoint.pt", {"model": MODEL_CFG}, model, opt, {"epoch": 1})
    found = read_init_from(tmp_path / "checkpoint.pt")
    assert found["model_config"] == MODEL_CFG and found["src_vocab"] is None and found["tgt_vocab"] is None
    for kind, (path, _) in bad_files(tmp_path).items():
        if kind == "foreign":
            continue  # has no `model`: below
        with pytest.raises(ConfigError, match=rf"^train\.init_from: {path}") as info:
            read_init_from(path)
        assert "\n" not in str(info.value)
    torch.save({"model": [1, 2]}, tmp_path / "odd.pt")
    with pytest.raises(ConfigError, match="not a model.pt or checkpoint.pt written by nmt train"):
        read_init_from(tmp_path / "odd.pt")


def test_a_checkpoint_whose_state_is_not_nmts_is_one_line(tmp_path):
    model = make_model(train=True)
    opt = make_optimizer(model.parameters(), train_settings(optimizer="sgd", lr=0.1))
    save_checkpoint(tmp_path / "checkpoint.pt", {"model": MODEL_CFG}, model, opt, {"epoch": "1", "batch": 0})
    with pytest.raises(
        ConfigError,
        match=r"checkpoint\.pt: not a checkpoint written by nmt train \(its state\.epoch "
        r"is a str, not an integer\); move it away",
    ):
        load_checkpoint(tmp_path / "checkpoint.pt")
    save_checkpoint(tmp_path / "checkpoint.pt", {"model": MODEL_CFG}, model, opt, {"epoch": 1, "batch": 0})
    assert load_checkpoint(tmp_path / "checkpoint.pt")["state"]["epoch"] == 1
    with pytest.raises(ConfigError, match=r"\(its state has no updates\)"):  # what a training resumes from
        load_checkpoint(tmp_path / "checkpoint.pt", resume=True)


@pytest.mark.parametrize("room", [0, 300, 3000])
def test_a_full_disk_leaves_the_previous_checkpoint_as_it_was_and_names_the_file(tmp_path, monkeypatch, room):
    """torch's zip writer turns the disk's error into a RuntimeError of its own (past its first bytes): the save is
    an OSError naming checkpoint.pt, the temporary file is gone and the previous checkpoint is byte for byte there."""
    import nmt.base.atomic

    path = tmp_path / "checkpoint.pt"
    model = make_model(train=True)
    opt = make_optimizer(model.parameters(), train_settings(optimizer="sgd", lr=0.1))
    save_checkpoint(path, {"model": MODEL_CFG}, model, opt, {"epoch": 1, "batch": 0})
    before = path.read_bytes()
    assert len(before) > room
    monkeypatch.setattr(nmt.base.atomic, "os", FullDisk(room))
    with pytest.raises(OSError) as info:
        save_checkpoint(path, {"model": MODEL_CFG}, make_model(seed=1, train=True), opt, {"epoch": 2, "batch": 0})
    assert info.type is OSError and info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]
    with pytest.raises(OSError, match="No space left on device") as info:
        save_model(tmp_path / "model.pt", model, Vocab(SRC_WORDS), TGT_WORDS, {"model": dict(MODEL_CFG)})
    assert info.value.filename == str(tmp_path / "model.pt") and not (tmp_path / "model.pt").exists()


def test_an_unreadable_checkpoint_says_to_move_it_away(tmp_path):
    (tmp_path / "checkpoint.pt").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ConfigError, match=r"checkpoint\.pt: not a readable checkpoint .* move it away"):
        load_checkpoint(tmp_path / "checkpoint.pt")


# -- RNG states -------------------------------------------------------------------------------------------------
@pytest.fixture
def fake_cuda(monkeypatch):
    fake = FakeCudaRng()
    monkeypatch.setattr(torch.cuda, "get_rng_state", fake.get_rng_state)
    monkeypatch.setattr(torch.cuda, "set_rng_state", fake.set_rng_state)
    return fake


def test_a_checkpoint_on_cuda_keeps_and_restores_the_cuda_rng_of_its_device(tmp_path, fake_cuda):
    device = torch.device("cuda", 1)
    model = make_model(train=True)
    opt = make_optimizer(model.parameters(), train_settings(optimizer="sgd", lr=0.1))
    torch.manual_seed(5)
    states = rng_states(device)
    assert [d for d, _ in fake_cuda.gets] == [device]  # the run's own device, not the current one
    save_checkpoint(tmp_path / "checkpoint.pt", {"model": MODEL_CFG}, model, opt, {"epoch": 1, "batch": 4, **states})
    cpu_then = torch.get_rng_state()
    torch.rand(10)  # the CPU generator moves on

    state = load_checkpoint(tmp_path / "checkpoint.pt")["state"]
    assert torch.equal(state["cuda_rng"], fake_cuda.gets[0][1])
    assert restore_rng_states(state, device) is None  # exact
    assert len(fake_cuda.sets) == 1
    assert fake_cuda.sets[0][0] == device and torch.equal(fake_cuda.sets[0][1], fake_cuda.gets[0][1])
    assert torch.equal(torch.get_rng_state(), cpu_then)

    # the same checkpoint resumed on the CPU: the CPU state only, and a note that it is not exact
    torch.rand(10)
    note = restore_rng_states(state, "cpu")
    assert "written on a GPU" in note and len(fake_cuda.sets) == 1
    assert torch.equal(torch.get_rng_state(), cpu_then)
    assert rng_states("cpu")["cuda_rng"] is None and len(fake_cuda.gets) == 1  # a CPU run never asks CUDA


def test_a_checkpoint_without_cuda_rng_still_resumes_on_cuda(fake_cuda):
    torch.manual_seed(3)
    old = {"epoch": 2, "batch": 5, "rng": torch.get_rng_state()}  # as nmt wrote checkpoints before cuda_rng
    torch.rand(10)
    note = restore_rng_states(old, "cuda")
    assert "no CUDA RNG state" in note and fake_cuda.sets == []
    assert torch.equal(torch.get_rng_state(), old["rng"])
    assert restore_rng_states({**old, "cuda_rng": None}, "cpu") is None  # a CPU checkpoint on the CPU: exact


def test_on_cuda_is_about_the_device_type():
    assert model_io.on_cuda("cuda") and model_io.on_cuda(torch.device("cuda", 2)) and not model_io.on_cuda("cpu")
