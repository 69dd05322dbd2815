"""One job per GPU: each nmt process claims a GPU no other nmt job holds (lock files), waiting when all are taken."""

import fcntl
import os
import threading
import time

import pytest
import torch

from nmt.base import devices


@pytest.fixture
def other_job(tmp_path, monkeypatch):
    """A private lock directory and no device claimed yet. other_job(count) claims a GPU as another process
    would: the lock stays held (its open file is returned, closing it ends that job), this process forgets it."""
    monkeypatch.setenv("NMT_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(devices, "_claimed", None)
    held = []

    def claim(count):
        device = devices.claim_gpu(count)
        held.append(devices._claimed[1])
        devices._claimed = None
        return device, held[-1]

    yield claim
    devices.release_gpu()
    for handle in held:
        handle.close()


def test_an_explicit_device_is_taken_as_given_and_no_cuda_means_the_cpu(monkeypatch):
    assert devices.pick_device("cpu") == torch.device("cpu")
    assert devices.pick_device("cuda:1") == torch.device("cuda", 1)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert devices.pick_device() == torch.device("cpu")


def test_jobs_side_by_side_get_different_gpus(other_job):
    assert other_job(2)[0] == torch.device("cuda", 0)
    assert other_job(2)[0] == torch.device("cuda", 1)
    claims = [line.split("\t") for line in (devices.lock_dir() / "claims.log").read_text().splitlines()]
    assert [c[2] for c in claims] == ["cuda:0", "cuda:1"] and all(c[1] == str(os.getpid()) for c in claims)


def test_a_process_keeps_its_gpu(other_job):
    first = devices.claim_gpu(2)
    assert devices.claim_gpu(2) == first  # e.g. the members of an ensemble, loaded one after the other


def test_a_job_waits_while_every_gpu_is_taken_and_gets_the_one_given_back(other_job):
    _, on_gpu0 = other_job(2)
    other_job(2)
    said, got = [], []
    waiter = threading.Thread(target=lambda: got.append(devices.claim_gpu(2, poll_seconds=0.02, log=said.append)))
    waiter.start()
    time.sleep(0.3)
    assert not got and len(said) == 1 and "all 2 GPU(s) are in use by other nmt jobs" in said[0]
    on_gpu0.close()  # that job ends: its lock goes with its open file
    waiter.join(timeout=5)
    assert got == [torch.device("cuda", 0)]


def test_locks_are_named_after_the_physical_devices_the_scheduler_gave(other_job, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert devices.physical_ids(2) == ["3", "5"]
    devices.lock_dir().mkdir(parents=True)
    # another job (say one that SLURM gave only GPU 3) holds physical GPU 3: this job takes its second device
    with open(devices.lock_dir() / "gpu-3.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert devices.claim_gpu(2) == torch.device("cuda", 1)


def test_with_jobs_per_gpu_jobs_fill_every_gpu_before_sharing_one_and_then_wait(other_job, monkeypatch):
    monkeypatch.setenv("NMT_JOBS_PER_GPU", "2")
    jobs = [other_job(2) for _ in range(4)]
    assert [device for device, _ in jobs] == [torch.device("cuda", i) for i in (0, 1, 0, 1)]
    said, got = [], []
    waiter = threading.Thread(target=lambda: got.append(devices.claim_gpu(2, poll_seconds=0.02, log=said.append)))
    waiter.start()
    time.sleep(0.2)
    assert not got and len(said) == 1 and "all 2 GPU(s) are in use" in said[0]  # the fifth job waits ...
    jobs[3][1].close()  # ... until a job on GPU 1 ends
    waiter.join(timeout=5)
    assert got == [torch.device("cuda", 1)]


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_jobs_per_gpu_is_a_config_error_naming_the_variable(other_job, monkeypatch, value):
    monkeypatch.setenv("NMT_JOBS_PER_GPU", value)
    with pytest.raises(devices.ConfigError, match="NMT_JOBS_PER_GPU"):
        devices.claim_gpu(2)
