"""The end-to-end runs as pytest-xdist's workers read them (tests/pipelines.py): what the controlling process
publishes of a finished run, read back in a worker's own copy of the run's directory."""

import json
import os
import subprocess

import pytest

import pipelines
import required


@pytest.fixture
def finished(tmp_path):
    """A run's directory with a file of a known time, and its Pipeline with two finished commands."""
    workdir = tmp_path / "runs" / "snakemake"
    (workdir / "results").mkdir(parents=True)
    table = workdir / "results" / "table.json"
    table.write_text('{"bleu": 1.0}')
    os.utime(table, ns=(1_000_000_000, 2_000_000_000))
    (workdir / "link").symlink_to("results/table.json")
    pipeline = pipelines.Pipeline("snakemake", workdir, commands=[])
    pipeline.results = [
        subprocess.CompletedProcess(["snakemake", "-n"], 0, "Job stats:\njob count\n", ""),
        subprocess.CompletedProcess(["snakemake", "--cores", "2"], 0, "done\n", "warning\n"),
    ]
    pipeline.seconds = 12.5
    return pipeline


def publish(pipeline, **extra):
    directory = pipeline.workdir.parent
    pipelines.write_json(directory / f"{pipeline.name}.json", pipeline.outcome(**extra))
    return directory


def test_a_worker_reads_the_run_as_its_process_left_it_in_a_copy_of_its_own(finished):
    runs = pipelines.PublishedRuns(publish(finished), "gw1")
    run = runs["snakemake"]
    assert run.workdir == finished.workdir.parent / "gw1" / "snakemake"
    copied = run.workdir / "results" / "table.json"
    assert copied.read_text() == '{"bleu": 1.0}' and copied.stat().st_mtime_ns == 2_000_000_000
    assert (run.workdir / "link").is_symlink() and os.readlink(run.workdir / "link") == "results/table.json"
    assert [(r.args, r.returncode, r.stdout, r.stderr) for r in run.results] == [
        (r.args, r.returncode, r.stdout, r.stderr) for r in finished.results
    ]
    assert run.seconds == 12.5 and run.error is None
    # the worker's changes stay in its copy, and a second read is the same copy
    copied.write_text("changed")
    assert (finished.workdir / "results" / "table.json").read_text() == '{"bleu": 1.0}'
    assert runs["snakemake"] is run and copied.read_text() == "changed"


def test_a_failed_run_fails_the_test_that_reads_it_and_is_not_copied(finished):
    finished.error = "snakemake --cores 2 exited with 1"
    runs = pipelines.PublishedRuns(publish(finished), "gw0")
    with pytest.raises(AssertionError, match="snakemake run: snakemake --cores 2 exited with 1"):
        runs["snakemake"]
    assert not (finished.workdir.parent / "gw0").exists()


@pytest.mark.parametrize("strict", [False, True])
def test_a_run_that_could_not_start_skips_the_test_or_fails_it_in_ci(tmp_path, monkeypatch, strict):
    monkeypatch.setattr(required, "STRICT", strict)
    pipelines.write_json(tmp_path / "unavailable.json", {"dvc": "dvc is not installed"})
    outcome = pytest.fail.Exception if strict else pytest.skip.Exception
    with pytest.raises(outcome, match="dvc is not installed"):
        pipelines.PublishedRuns(tmp_path, "gw0")["dvc"]


def test_a_run_not_yet_published_is_waited_for_and_one_never_published_fails(finished, monkeypatch):
    directory = finished.workdir.parent
    runs = pipelines.PublishedRuns(directory, "gw0")
    naps = []

    def nap(seconds):  # the run ends while the reader waits
        naps.append(seconds)
        publish(finished)

    monkeypatch.setattr(pipelines.time, "sleep", nap)
    assert runs["snakemake"].seconds == 12.5 and len(naps) == 1
    monkeypatch.setattr(pipelines.PublishedRuns, "PATIENCE", 0)
    with pytest.raises(pytest.fail.Exception, match="the dvc run was not published"):
        runs["dvc"]


def test_the_cluster_run_carries_the_job_it_requeued(finished):
    finished.name = "slurm"
    requeued = {"job": "7", "task": "en-de", "system": "base"}
    runs = pipelines.PublishedRuns(publish(finished, requeued=requeued), "gw0")
    assert runs.requeued == requeued
    assert runs.cluster.env["SLURM_CONF"] == str(finished.workdir.parent / "cluster" / "slurm.conf")


def test_a_published_file_is_whole_or_absent(tmp_path):
    pipelines.write_json(tmp_path / "run.json", {"a": [1, 2]})
    assert json.loads((tmp_path / "run.json").read_text()) == {"a": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
