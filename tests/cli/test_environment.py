"""nmt.base.environment: where code runs, as plain JSON-able data, and never an exception."""

import json
import platform
import subprocess

import pytest
import torch

from nmt.base import environment


def test_a_machine_without_cuda_has_no_gpus_and_a_cpu_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    described = environment.describe("cpu")
    assert json.loads(json.dumps(described)) == described  # plain JSON
    assert described["hardware"]["gpus"] == [] and described["device"] == "cpu"
    assert described["hardware"]["cpu_count"] >= 1
    software = described["software"]
    assert software["python"] == platform.python_version() and software["torch"] == torch.__version__
    assert software["cuda"] == torch.version.cuda
    assert set(software) == {
        "os",
        "python",
        "torch",
        "cuda",
        "cudnn",
        "sacrebleu",
        "sacremoses",
        "eflomal",
        "numpy",
        "nmt",
    }
    commit = described["code"]["commit"]
    assert commit is None or (len(commit) == 40 and int(commit, 16) >= 0)
    assert described["code"]["dirty"] in ((None,) if commit is None else (True, False))
    assert "device" not in environment.describe()  # only a training names its device


def test_a_probe_that_raises_gives_null_and_describe_never_raises(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("probe failed")

    for probe in (
        "cpu_model",
        "gpus",
        "torch_cuda",
        "cudnn_version",
        "package_version",
        "git_commit",
        "git_dirty",
        "device_name",
    ):
        monkeypatch.setattr(environment, probe, boom)
    for name in ("machine", "platform", "python_version"):
        monkeypatch.setattr(environment.platform, name, boom)
    monkeypatch.setattr(environment.os, "cpu_count", boom)
    described = environment.describe("cuda:3")
    assert described == {
        "hardware": {"cpu": None, "cpu_count": None, "machine": None, "gpus": None},
        "software": dict.fromkeys(
            ["os", "python", "torch", "cuda", "cudnn", "sacrebleu", "sacremoses", "eflomal", "numpy", "nmt"]
        ),
        "code": {"commit": None, "dirty": None},
        "device": None,
    }


@pytest.mark.parametrize(
    "failure", [FileNotFoundError("nvidia-smi"), subprocess.TimeoutExpired("git", 10), PermissionError("git")]
)
def test_missing_or_hanging_commands_give_null(monkeypatch, failure):
    def run(*args, **kwargs):
        raise failure

    monkeypatch.setattr(environment.subprocess, "run", run)
    assert environment.nvidia_driver() is None
    assert environment.git_commit() is None and environment.git_dirty() is None
    assert environment.describe()["code"] == {"commit": None, "dirty": None}


def test_each_visible_gpu_with_the_driver_nvidia_smi_reports(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: f"NVIDIA Test {getattr(device, 'index', device)}")
    monkeypatch.setattr(
        environment, "_run", lambda command, cwd=None: "550.54.15\n550.54.15\n" if command[0] == "nvidia-smi" else None
    )
    assert environment.gpus() == [
        {"name": "NVIDIA Test 0", "driver": "550.54.15"},
        {"name": "NVIDIA Test 1", "driver": "550.54.15"},
    ]
    assert environment.device_name("cuda:1") == "NVIDIA Test 1" and environment.device_name("cpu") == "cpu"
    monkeypatch.setattr(environment, "_run", lambda command, cwd=None: None)  # no nvidia-smi
    assert [gpu["driver"] for gpu in environment.gpus()] == [None, None]
