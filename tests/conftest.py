"""The end-to-end runs of the tiny preset that the selected tests need (tests/pipelines.py).

A test says which runs it reads with @pytest.mark.pipeline("snakemake" | "dvc" | "slurm" | "reference" | "interrupted") and takes the
`tiny_runs` fixture. Once the tests are collected, every run that a selected test names starts in the
background, all at once, and the unit tests run meanwhile: on two cores the whole suite then takes little more
than its longest run. `dvc repro` is that run (one stage at a time), so the others run at a lower CPU priority
(nice 10) and do not hold it back, and so do the unit tests (nice 5, this thread only: on Linux a thread's
niceness is its own, so the pipeline threads already started, and what they start, keep theirs). Without
that, the unit tests' torch threads took most of both cores and `dvc repro` crawled past its time limit. A run whose tool is missing is skipped with the reason, except in CI
(NMT_REQUIRE_ALL=1, set by .ci/run, which installs snakemake, DVC and SLURM): then it is a failure (tests/required.py).

Spread over processes (pytest-xdist, `-n 2`), the runs start once, in the controlling process, from the runs its
workers' tests name; each run, once finished, is published as a JSON file in the runs' directory, and a worker reads
it in its own copy of the run's directory (pipelines.FinishedRun).
"""

from __future__ import annotations

import importlib.util
import json
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

    def start(self, wanted: set[str], directory: Path | None = None) -> None:
        self.directory = directory or Path(tempfile.mkdtemp(prefix="nmt-e2e-"))
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

    def publish(self) -> None:
        """For worker processes (pipelines.PublishedRuns): which runs cannot start, now; each run's outcome once it ends."""
        pipelines.write_json(self.directory / "unavailable.json", self.unavailable)

        def when_done(name: str, pipeline: pipelines.Pipeline) -> None:
            pipeline.wait()
            extra = {"requeued": self.requeued} if name == "slurm" else {}
            pipelines.write_json(self.directory / f"{name}.json", pipeline.outcome(**extra))

        for name, pipeline in self.pipelines.items():
            threading.Thread(target=when_done, args=(name, pipeline), daemon=True).start()

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


_RUNS: TinyRuns | pipelines.PublishedRuns = TinyRuns()

# BLAS on one thread in this process: beside the pipelines the tests run, a second OpenBLAS thread spins for a busy
# core and a small matrix product took seven times as long (the coverage simulation: 9 s against 1.3 s for 60
# replicates). Processes the tests start keep their own settings.
_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")


def _controls_workers(config) -> bool:
    """Whether this is pytest-xdist's controlling process (which runs no test)."""
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def pytest_configure(config):
    global _RUNS
    if _controls_workers(config):
        _RUNS.directory = Path(tempfile.mkdtemp(prefix="nmt-e2e-"))
    elif hasattr(config, "workerinput") and "nmt_runs" in config.workerinput:
        _RUNS = pipelines.PublishedRuns(Path(config.workerinput["nmt_runs"]), config.workerinput["workerid"])


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["nmt_runs"] = str(_RUNS.directory)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The first worker to have collected says which runs its tests read (every worker collects the same tests)."""
    said = _RUNS.directory / f"wanted-{node.gateway.id}.json"
    if _RUNS.pipelines or _RUNS.unavailable or not said.exists():
        return
    wanted = set(json.loads(said.read_text()))
    if wanted:
        _RUNS.start(wanted, _RUNS.directory)
        _RUNS.publish()


def pytest_collection_modifyitems(session, config, items):
    """The tests that read the end-to-end runs go last, so that every unit test runs while the runs do."""
    items.sort(key=lambda item: item.get_closest_marker("pipeline") is not None)  # stable: order kept otherwise


@pytest.hookimpl(tryfirst=True)  # under xdist: before the worker tells the controller it has collected
def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    wanted = {marker.args[0] for item in session.items for marker in item.iter_markers("pipeline")}
    if isinstance(_RUNS, pipelines.PublishedRuns):
        pipelines.write_json(_RUNS.directory / f"wanted-{_RUNS.worker}.json", sorted(wanted))
    elif wanted:
        _RUNS.start(wanted)
    if wanted and hasattr(os, "nice"):
        os.nice(5)


def pytest_sessionfinish(session):
    if isinstance(_RUNS, pipelines.PublishedRuns):
        return  # the controlling process stops the runs, once every worker is done
    kept = _RUNS.stop(keep=session.testsfailed > 0)
    if _RUNS.pipelines:  # what the suite's wall time is made of, in CI's log
        print("\nend-to-end runs: " + ", ".join(f"{p.name} {p.seconds:.0f} s" for p in _RUNS.pipelines.values()))
    if kept:
        print(f"\n{kept}")


@pytest.fixture(scope="session")
def tiny_runs():
    return _RUNS
