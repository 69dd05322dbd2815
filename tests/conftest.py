"""The end-to-end runs of the tiny preset that the selected tests need (tests/pipelines.py).

A test says which runs it reads with @pytest.mark.pipeline("snakemake" | "dvc" | "slurm" | "reference" | "interrupted") and takes the
`tiny_runs` fixture. Once the tests are collected, every run that a selected test names starts in the
background, all at once, and the unit tests run meanwhile: on two cores the whole suite then takes little more
than its longest run. `dvc repro` is that run (one stage at a time), so the others run at a lower CPU priority
(nice 10) and do not hold it back, and so do the unit tests (nice 5, this thread only: on Linux a thread's
niceness is its own, so the pipeline threads already started, and what they start, keep theirs). Without
that, the unit tests' torch threads took most of both cores and `dvc repro` crawled past its time limit. A run whose tool is missing is skipped with the reason, except in CI
(NMT_REQUIRE_ALL=1, set by .ci/run, which installs snakemake, DVC and SLURM): then it is a failure (tests/required.py).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy  # noqa: F401  (loaded here so that its BLAS can be limited)
import pytest
import scipy.linalg  # noqa: F401  (scipy's own BLAS, likewise)
from threadpoolctl import threadpool_limits

import pipelines
import required

# Fixtures several test files use, wherever their folder (tests/training_runs.py: `workspace`; tests/command_line.py:
# `nmt`).
pytest_plugins = ["training_runs", "command_line"]


class TinyRuns:
    def __init__(self):
        self.pipelines: dict[str, pipelines.Pipeline] = {}
        self.unavailable: dict[str, str] = {}
        self.cluster: pipelines.SlurmCluster | None = None
        self.requeued: dict = {}  # the training job the cluster run requeued mid-training

    def start(self, wanted: set[str]) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="nmt-e2e-"))
        for tool in ("snakemake", "dvc"):
            if tool in wanted and importlib.util.find_spec(tool) is None:
                self.unavailable[tool] = f"{tool} is not installed"
        if "slurm" in wanted:
            why = pipelines.slurm_unavailable()
            if why:
                self.unavailable["slurm"] = why
            else:
                self.cluster = pipelines.SlurmCluster(self.directory / "cluster", nice=10).start()
                slurm = pipelines.slurm_pipeline(self.directory / "slurm", self.cluster).start()
                self.pipelines["slurm"] = slurm
                threading.Thread(
                    target=pipelines.requeue_one_training_job, args=(self.cluster, slurm, self.requeued), daemon=True
                ).start()
        if "snakemake" in wanted and "snakemake" not in self.unavailable:
            self.pipelines["snakemake"] = pipelines.snakemake_pipeline(self.directory / "snakemake", nice=10).start()
        if "interrupted" in wanted:
            if importlib.util.find_spec("snakemake") is None:
                self.unavailable["interrupted"] = "snakemake is not installed"
            else:
                self.pipelines["interrupted"] = pipelines.interrupted_pipeline(
                    self.directory / "interrupted", nice=10
                ).start()
        if "reference" in wanted:
            mirror = pipelines.ROOT.parent / "shared" / "data"
            if importlib.util.find_spec("snakemake") is None:
                self.unavailable["reference"] = "snakemake is not installed"
            elif not (mirror / "multi30k").is_dir():
                self.unavailable["reference"] = f"{mirror / 'multi30k'} is absent"
            else:
                self.pipelines["reference"] = pipelines.reference_pipeline(
                    self.directory / "reference", mirror, nice=10
                ).start()
        if "dvc" in wanted and "dvc" not in self.unavailable:
            self.pipelines["dvc"] = pipelines.dvc_pipeline(self.directory / "dvc").start()

    def stop(self, keep: bool) -> str | None:
        """Wait for the runs, stop the cluster; remove their directory unless `keep` (then say where it is)."""
        for pipeline in self.pipelines.values():
            pipeline.wait()
        if self.cluster is not None:
            self.cluster.stop()
        if not hasattr(self, "directory"):
            return None
        if keep:
            return f"the end-to-end runs are kept in {self.directory}"
        shutil.rmtree(self.directory, ignore_errors=True)
        return None

    def __getitem__(self, name: str) -> pipelines.Pipeline:
        if name in self.unavailable:
            required.unavailable(self.unavailable[name])
        return self.pipelines[name].wait().check()


_RUNS = TinyRuns()

# BLAS on one thread in this process: beside the pipelines the tests run, a second OpenBLAS thread spins for a busy
# core and a small matrix product took seven times as long (the coverage simulation: 9 s against 1.3 s for 60
# replicates). Processes the tests start keep their own settings.
_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")


def pytest_collection_modifyitems(session, config, items):
    """The tests that read the end-to-end runs go last, so that every unit test runs while the runs do."""
    items.sort(key=lambda item: item.get_closest_marker("pipeline") is not None)  # stable: order kept otherwise


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    wanted = {marker.args[0] for item in session.items for marker in item.iter_markers("pipeline")}
    if wanted:
        _RUNS.start(wanted)
        if hasattr(os, "nice"):
            os.nice(5)


def pytest_sessionfinish(session):
    kept = _RUNS.stop(keep=session.testsfailed > 0)
    if _RUNS.pipelines:  # what the suite's wall time is made of, in CI's log
        print("\nend-to-end runs: " + ", ".join(f"{p.name} {p.seconds:.0f} s" for p in _RUNS.pipelines.values()))
    if kept:
        print(f"\n{kept}")


@pytest.fixture(scope="session")
def tiny_runs():
    return _RUNS
