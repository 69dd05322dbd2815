"""The tiny preset run end to end in scratch copies of the repository: by Snakemake on this machine, by
`dvc repro`, and by Snakemake on a real one-node SLURM cluster (tests/cluster/local_slurm.sh).

The runs go side by side (tests/conftest.py starts the ones the selected tests need at once): DVC runs one
stage at a time and the cluster run waits on its scheduler between jobs, so together they keep both CPU cores
busy and take little longer than the slowest alone. Each run is a list of commands, stopped at the first that
fails; the tests then read what the commands wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from nmt.data.tasks import data_task

import required

ROOT = Path(__file__).resolve().parents[1]
PRESET = "tiny"
LOCAL_SLURM = ROOT / "tests" / "cluster" / "local_slurm.sh"


# The tables the DVC, cluster and interrupted runs make: a part of the preset's DAG that has every kind of job but the
# decoding of an ensemble (training Luong-style and RNNsearch models from scratch, from another system's model and
# guided by aligners' or a model's links; beam, greedy and hard-monotonic decoding; unk replacement, scoring, eflomal,
# alignment extraction, merging and scoring, heat maps, both benchmarks, the report and its claims) and half of its
# jobs: what those runs check is their engine or its resumption, and each job costs them most in starting processes
# (the cluster run starts Snakemake itself twice per job). The full DAG runs in the Snakemake run on one machine, and
# both engines' plans of the full DAG are compared job by job in tests/pipeline/test_workflow.py.
PART = {
    "tables": [
        "workflow/tables/peter2017_table1.yaml",
        "workflow/tables/peter2017_guided_bleu.yaml",
        "workflow/tables/raffel2017_table4.yaml",
    ],
    "figures": ["workflow/figures/peter2017.yaml"],
}


def scratch_copy(dest: Path, part: bool = False) -> Path:
    """The workflow files of this checkout (not its data or results) in a fresh directory, preset tiny; with
    `part`, its params.yaml lists only the tables and figures of PART."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "params.yaml", "dvc.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "workflow", dest / "workflow")
    shutil.copytree(ROOT / "profiles", dest / "profiles")
    # dvc.yaml names the package sources as dependencies of its stages.
    shutil.copytree(ROOT / "nmt", dest / "nmt", ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((dest / "params.yaml").read_text())
    params["preset"] = PRESET
    if part:
        params.update(PART)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    run([sys.executable, "-m", "nmt.cli", "dvc-yaml"], dest)  # dvc.yaml's stages for the preset, as a user does
    return dest


def run(cmd, cwd, timeout=900, env=None) -> subprocess.CompletedProcess:
    """A command that must succeed; its output tails are in the assertion message."""
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    )
    return result


def jobs_of(dry_run: str) -> set[tuple[str, str | None]]:
    """(rule, system wildcard) of every job a Snakemake run or dry run printed."""
    jobs, rule, system = set(), None, None
    for line in [*dry_run.splitlines(), "rule end:"]:
        started = re.match(r"(?:local)?rule (\w+):$", line)
        if started:
            if rule:
                jobs.add((rule, system))
            rule, system = started.group(1), None
        elif rule and re.match(r"\s+wildcards: .*\bsystem=[\w-]+", line):
            system = re.search(r"\bsystem=([\w-]+)", line).group(1)
    return jobs


@dataclass
class Pipeline:
    """Commands run one after the other in `workdir`, in a thread; `wait()` returns once they are done."""

    name: str
    workdir: Path
    commands: list[list[str]]
    env: dict | None = None
    timeout: float = 2400  # a guard against a hung run, not a budget: CI itself stops at 90 minutes
    nice: int = 0  # run the commands at this lower CPU priority
    results: list[subprocess.CompletedProcess] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    def start(self) -> "Pipeline":
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        try:
            for cmd in self.commands:
                left = self.timeout - (time.monotonic() - started)
                if self.nice:
                    cmd = ["nice", "-n", str(self.nice), *cmd]
                result = subprocess.run(
                    cmd, cwd=self.workdir, capture_output=True, text=True, env=self.env, timeout=max(left, 1)
                )
                self.results.append(result)
                if result.returncode != 0:
                    # the commands before it too: a run interrupted and resumed fails by what an earlier one did
                    before = "".join(
                        f"before it, {' '.join(map(str, r.args))} exited with {r.returncode}, ending:\n"
                        f"{r.stdout[-1500:]}\n{r.stderr[-1500:]}\n"
                        for r in self.results[:-1]
                    )
                    self.error = (
                        f"{' '.join(map(str, cmd))} exited with {result.returncode}:\n"
                        f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}\n{before}"
                    )
                    break
        except subprocess.TimeoutExpired as err:
            self.error = f"{self.name}: {' '.join(map(str, err.cmd))} ran past {self.timeout:.0f} s"
        self.seconds = time.monotonic() - started

    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self) -> "Pipeline":
        self._thread.join()
        return self

    def check(self) -> "Pipeline":
        """The finished pipeline, or a failed assertion saying which command failed and how."""
        assert self.error is None, f"{self.name} run: {self.error}"
        return self

    def outcome(self, **extra) -> dict:
        """What the tests read of the finished run, as JSON (for test processes other than the one that ran it)."""
        results = [
            {"args": list(map(str, r.args)), "returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
            for r in self.results
        ]
        return {"workdir": str(self.workdir), "error": self.error, "seconds": self.seconds, "results": results, **extra}


@dataclass
class FinishedRun:
    """A run another process made, as its outcome (Pipeline.outcome) says, read in a private copy of its directory:
    a test may change the files of the run it reads, and the tests of two processes must not see each other's
    changes (nor take each other's DVC or Snakemake locks)."""

    name: str
    workdir: Path
    error: str | None
    seconds: float
    results: list[subprocess.CompletedProcess]
    extra: dict

    @classmethod
    def copied(cls, name: str, outcome: dict, copy: Path) -> "FinishedRun":
        if outcome["error"] is None and not copy.exists():
            shutil.copytree(outcome["workdir"], copy, symlinks=True)  # times kept: the tools see nothing to redo
        results = [subprocess.CompletedProcess(**r) for r in outcome["results"]]
        known = ("workdir", "error", "seconds", "results")
        extra = {k: v for k, v in outcome.items() if k not in known}
        return cls(name, copy, outcome["error"], outcome["seconds"], results, extra)

    def check(self) -> "FinishedRun":
        assert self.error is None, f"{self.name} run: {self.error}"
        return self


class PublishedRuns:
    """A worker process's view of the runs the controlling process started (TinyRuns.publish): the same
    interface as TinyRuns, each run waited for and read in this worker's own copy of its directory."""

    PATIENCE = 3600  # seconds: longer than any run's own time limit (Pipeline.timeout)

    def __init__(self, directory: Path, worker: str):
        self.directory, self.worker = directory, worker
        self.runs: dict[str, FinishedRun] = {}

    def __getitem__(self, name: str) -> FinishedRun:
        if name not in self.runs:
            outcome = self._outcome(name)
            self.runs[name] = FinishedRun.copied(name, outcome, self.directory / self.worker / name)
        return self.runs[name].check()

    def _outcome(self, name: str) -> dict:
        published, unavailable = self.directory / f"{name}.json", self.directory / "unavailable.json"
        deadline = time.monotonic() + self.PATIENCE
        while time.monotonic() < deadline:
            if unavailable.exists() and name in (why := json.loads(unavailable.read_text())):
                required.unavailable(why[name])
            if published.exists():
                return json.loads(published.read_text())
            time.sleep(1)
        pytest.fail(f"the {name} run was not published in {self.directory} within {self.PATIENCE} s")

    @property
    def cluster(self) -> SlurmCluster:
        return SlurmCluster(self.directory / "cluster")  # still running: the controller stops it last

    @property
    def requeued(self) -> dict:
        return self["slurm"].extra["requeued"]


def write_json(path: Path, value) -> None:
    """`value` as JSON at `path`, whole or not at all (a reader polls for the file)."""
    part = path.with_suffix(".part")
    part.write_text(json.dumps(value))
    part.replace(path)


def snakemake_pipeline(workdir: Path, nice: int = 0) -> Pipeline:
    scratch_copy(workdir)
    return Pipeline(
        "snakemake", workdir, [["snakemake", "-n", "--cores", "2"], ["snakemake", "--cores", "2"]], nice=nice
    )


def interrupted_pipeline(workdir: Path, nice: int = 0) -> Pipeline:
    """PART of the tiny DAG (70 jobs) stopped twice as a user or a machine stops it, each time run again with the same
    command: Ctrl-C (SIGINT to Snakemake and its jobs) after 20 steps, then SIGKILL to all of them (a lost node) after
    20 more, then to the end."""
    scratch_copy(workdir, part=True)
    interrupt = [sys.executable, str(ROOT / "tests" / "interrupt.py")]
    run_all = ["snakemake", "--cores", "2"]
    return Pipeline(
        "interrupted",
        workdir,
        [[*interrupt, "SIGINT", "20", *run_all], [*interrupt, "SIGKILL", "20", *run_all], run_all],
        nice=nice,
    )


def dvc_pipeline(workdir: Path) -> Pipeline:
    scratch_copy(workdir, part=True)
    # one stage at a time: about twice Snakemake's time alone
    return Pipeline("dvc", workdir, [["git", "init", "-q"], ["dvc", "init", "-q"], ["dvc", "repro", "-q"]])


# The GPU reference preset (workflow/presets/small-gpu.yaml) at toy sizes on the CPU, made as on the GPU machine one
# seed at a time (benchmarks/reference-gpu.sh): each seed's part by Snakemake, exported into a reference directory,
# and the report rendered from there after the run's own results are moved away. Multi30k comes from ../shared/data;
# the toy sizes: 300 training pairs, 1x16 LSTMs, one epoch, two seeds, greedy decoding, Tables 1 and 4 alone (Table
# 1's ensemble is of Table 4's systems): 47 jobs a seed, not the 64 of Tables 1-4 (what is tested is the parts).
REFERENCE_PRESET = "small-gpu"
REFERENCE_SEEDS = (1, 2)


def reference_pipeline(workdir: Path, mirror: Path, nice: int = 0) -> Pipeline:
    scratch_copy(workdir)
    preset_file = workdir / "workflow" / "presets" / f"{REFERENCE_PRESET}.yaml"
    preset = yaml.safe_load(preset_file.read_text())
    preset["data"]["mirror"] = str(mirror)
    preset["tables"] = ["workflow/tables/luong2015_table1.yaml", "workflow/tables/luong2015_table4.yaml"]
    preset["figures"] = []
    for task in preset["data"]["tasks"].values():
        task["max_train"] = 300
    preset["prepare"].update(src_vocab=300, tgt_vocab=300)
    preset["model"].update(layers=1, hidden=16, embed=16)
    preset["train"].update(
        plateau={"within": 0.01, "halvings": 1, "patience": 2, "max_epochs": 1}, seeds=list(REFERENCE_SEEDS)
    )
    preset["translate"] = {"beam": 1, "batch_size": 500}
    preset["eflomal"] = {"samplers": 1}
    preset_file.write_text(yaml.safe_dump(preset, sort_keys=False))
    nmt = [sys.executable, "-m", "nmt.cli"]
    common = ["--preset", REFERENCE_PRESET]
    commands = []
    for seed in REFERENCE_SEEDS:
        commands.append(
            [
                "bash",
                "-c",
                f"snakemake $({' '.join(nmt)} seed-targets {' '.join(common)} --seed {seed}) "
                f"--cores 2 --config preset={REFERENCE_PRESET}",
            ]
        )
        commands.append([*nmt, "export-run", *common, "--seed", str(seed), "--out", "reference/results"])
    commands += [
        ["mv", f"results/{REFERENCE_PRESET}", "results/moved"],
        [
            *nmt,
            "report",
            *common,
            "--results",
            "reference/results",
            "--data",
            f"data/{REFERENCE_PRESET}",
            "--out",
            "reference",
        ],
        [*nmt, "compare", "reference", "reference", "--json", "compare-itself.json"],
    ]
    return Pipeline("reference", workdir, commands, nice=nice)


# -- the SLURM cluster ------------------------------------------------------------------------------------------


def slurm_unavailable() -> str | None:
    """Why a test cluster cannot be started here, or None."""
    missing = [c for c in ("munged", "slurmctld", "slurmd", "sbatch") if shutil.which(c) is None]
    if missing:
        return f"SLURM is not installed ({', '.join(missing)} missing; .ci/run installs Debian's packages)"
    if os.geteuid() != 0:
        return "the test cluster's slurmd must run as root"
    conf = Path("/etc/slurm/slurm.conf")
    if (conf.exists() or conf.is_symlink()) and not (
        conf.is_symlink() and (Path(os.readlink(conf)).parent / "local_slurm.dir").exists()
    ):
        return "/etc/slurm/slurm.conf belongs to a real cluster: not starting a test cluster beside it"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm is not installed"
    return None


class SlurmCluster:
    """The one-node cluster of tests/cluster/local_slurm.sh in `directory`, with two fake GPUs; finished jobs stay
    visible to squeue/scontrol for an hour, so the tests can read what every job asked for. With `nice` its
    daemons, and so the jobs they start, run at that lower CPU priority."""

    def __init__(self, directory: Path, nice: int = 0):
        self.directory = directory
        self.nice = nice
        self.env = {**os.environ, "SLURM_CONF": str(directory / "slurm.conf")}

    def start(self) -> "SlurmCluster":
        run(
            ["nice", "-n", str(self.nice), "bash", str(LOCAL_SLURM), "start", str(self.directory)],
            ROOT,
            timeout=120,
            env={**os.environ, "FAKE_GPUS": "2", "MIN_JOB_AGE": "3600"},
        )
        return self

    def stop(self) -> None:
        subprocess.run(["bash", str(LOCAL_SLURM), "stop", str(self.directory)], timeout=120)

    def scontrol(self, *args) -> str:
        return run(["scontrol", *args], ROOT, timeout=60, env=self.env).stdout

    def jobs(self) -> list[dict]:
        """Every job the cluster knows, as scontrol's key=value fields (Comment holds Snakemake's rule and
        wildcards, TresPerJob the GPUs asked for, Restarts how often it was requeued)."""
        out = self.scontrol("show", "jobs", "-o")
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if line.startswith("JobId=")]


def slurm_pipeline(workdir: Path, cluster: SlurmCluster) -> Pipeline:
    """Snakemake with the project's SLURM profile as a user would run it, plus what a cluster without an
    accounting database needs (job states from squeue) and quick status checks; under `timeout -k`, since a
    Snakemake waiting on a job that never ends does not stop on SIGTERM alone."""
    scratch_copy(workdir, part=True)
    cmd = [
        "timeout",
        "-k",
        "30",
        "2400",
        "snakemake",
        "--workflow-profile",
        "profiles/slurm",
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "2",
    ]
    return Pipeline("slurm", workdir, [cmd], env=cluster.env, timeout=2500, nice=cluster.nice)


TRAIN_COMMENT = re.compile(rf"^rule_train_wildcards_{PRESET}_([a-z]+-[a-z]+)_(\w+)$")


def requeue_one_training_job(cluster: SlurmCluster, pipeline: Pipeline, requeued: dict) -> None:
    """Once a training job has finished its first epoch, `scontrol requeue` it (SLURM stops it with SIGTERM and
    queues it again, as when a job is pre-empted). Fills `requeued` with its job id, task and system."""
    while pipeline.running():
        for job in cluster.jobs():
            match = TRAIN_COMMENT.match(job.get("Comment", ""))
            if job.get("JobState") != "RUNNING" or not match:
                continue
            task, system = match.groups()
            log = pipeline.workdir / f"logs/{PRESET}/{task}/train/{system}.log"
            if log.exists() and "epoch 1:" in log.read_text():
                cluster.scontrol("requeue", job["JobId"])
                requeued.update(job=job["JobId"], task=task, system=system)
                return
        time.sleep(0.5)


# -- what the tests compare -------------------------------------------------------------------------------------


def preset_config(workdir: Path = ROOT):
    """The tiny preset as the run in `workdir` has it (its params.yaml: all tables, or PART)."""
    from nmt import config as cfg

    return cfg.load_params(workdir / "params.yaml", PRESET)


def systems(workdir: Path = ROOT) -> dict:
    """{task: [trained systems]} of every table of the run's preset."""
    from nmt.config import plan

    return {task: list(s) for task, s in plan.collect_systems(preset_config(workdir), ROOT).items()}


def evaluations(workdir: Path = ROOT) -> list:
    from nmt.config import plan

    return plan.collect_evaluations(preset_config(workdir), ROOT)


def table_ids(workdir: Path) -> list[str]:
    return [yaml.safe_load((ROOT / path).read_text())["id"] for path in preset_config(workdir)["tables"]]


def table_files(workdir: Path, ids: list[str] | None = None) -> dict[str, bytes]:
    """The report's CSV and JSON files of the tables `ids` (default: the run's), byte for byte, and the claims on
    them (the speed sections are timings, different in every run; the tables are not)."""
    report = workdir / f"reports/{PRESET}"
    out = {}
    for table_id in ids or table_ids(workdir):
        for ext in ("csv", "json"):
            out[f"{table_id}.{ext}"] = (report / f"{table_id}.{ext}").read_bytes()
    claims = json.loads((report / "claims.json").read_text())["claims"]
    # each claim as judged on its own: the adjusted verdict depends on every claim the report judges (Holm), and a
    # run of part of the DAG judges fewer
    family = ("p_adjusted", "verdict_adjusted", "verdict", "verdict_label")
    out["claims.json"] = json.dumps(
        [{k: v for k, v in c.items() if k not in family} for c in claims if c["table"] in (ids or table_ids(workdir))]
    ).encode()
    return out


def assert_same_tables(workdir: Path, reference: Path) -> None:
    """Two runs' reports show the same measured cells, each its own run's scores, in byte-identical table files
    (the tables of `workdir`'s run, which `reference` also made)."""
    ids = table_ids(workdir)
    assert check_report(workdir) == {key: value for key, value in check_report(reference).items() if key[0] in ids}
    assert table_files(workdir) == table_files(reference, ids)


def check_report(workdir: Path) -> dict:
    """Every measured cell of every table equals its scores file's field, and the claims on them are judged;
    returns the measured cells. A run of the whole preset is checked for what each table and figure shows."""
    report = workdir / f"reports/{PRESET}"
    html = (report / "index.html").read_text()
    shown = {}
    config = preset_config(workdir)
    for path in config["tables"]:
        table = yaml.safe_load((ROOT / path).read_text())
        rows = json.loads((report / f"{table['id']}.json").read_text())
        assert [r["status"] for r in rows] == [
            "reference" if spec["system"] is None else "measured" for spec in table["rows"]
        ]
        for row, spec in zip(rows, table["rows"]):
            if row["status"] != "measured":
                continue
            played_by = data_task(config, table["task"])  # e.g. de-en-europarl, played by de-en (same_as)
            scores = json.loads(
                (workdir / f"results/{PRESET}/{played_by}/scores/{row['system']}.{table['testset']}.json").read_text()
            )
            for column in table["columns"]:
                field_name = {column: column, **spec.get("values_from", {})}[column]
                assert row[f"ours_{column}"] == (scores[field_name] if field_name else None), (
                    table["id"],
                    row["label"],
                )
                shown[(table["id"], row["label"], column)] = row[f"ours_{column}"]
            if "ppl" in table["columns"] and row["ours_ppl"] is not None:
                assert f"{row['ours_ppl']:.2f}" in html
    claims = json.loads((report / "claims.json").read_text())
    judged = [c for c in claims["claims"] if c["table"] in table_ids(workdir) or c["kind"] == "speedup"]
    tally = claims["summary"]
    assert (
        judged
        and (
            f"of {tally['judged']} judged claims reproduced on {PRESET}"
            if tally["family"]
            else f"No claim tested on {PRESET}: {tally['single_run']} of its {tally['claims']} claims"
        )
        in html
    )
    assert '<section id="deviations">' in html and "synth in place of wmt14_en_de_stanford" in html
    for claim in judged:  # every claim on a table the run made has a verdict and an interval
        assert claim["verdict"] in ("reproduced", "contradicted", "inconclusive", "single run"), claim
        # the tiny preset trains one seed: no comparison of its systems gets a verdict (a speed-up is a measurement)
        assert (claim["verdict"] == "single run") == (claim["kind"] != "speedup"), claim
        assert claim["ci_low"] <= claim["ci_high"], claim
    if config["tables"] != preset_config()["tables"]:
        return shown
    assert claims["summary"]["claims"] >= 20 and claims["summary"]["not_run"] == 0
    # Table 6: AER of attention models and of eflomal against the tiny corpus' gold links
    for system in ("global_location_feed", "local_p_general_feed", "ensemble_attention", "eflomal_full"):
        aer = json.loads((workdir / f"results/{PRESET}/en-de/scores/{system}.align.json").read_text())
        assert 0.0 <= aer["aer"] <= 1.0 and aer["range_checked"]
        assert (aer.get("saer") is not None) == (system != "eflomal_full")  # soft matrices: models only
    for system in ("rnnsearch", "rnnsearch_guided", "rnnsearch_tf_frozen", "rnnsearch_tf_guided", "eflomal_hmm"):
        aer = json.loads((workdir / f"results/{PRESET}/de-en/scores/{system}.align.json").read_text())
        assert 0.0 <= aer["aer_pct"] <= 100.0 and aer["saer_hard_pct"] is not None
    frozen = json.loads((workdir / f"results/{PRESET}/en-de/models/rnnsearch_tf_frozen/model.json").read_text())
    assert frozen["trainable_parameters"] < frozen["parameters"]  # only the attention layer trained
    ensemble = json.loads((workdir / f"results/{PRESET}/en-de/scores/ensemble_attention.test.json").read_text())
    assert ensemble["ppl"] is None and ensemble["bleu_tok_unk"] is not None
    # Raffel Table 4: each monotonic system decoded greedily by its expected alignment and by the hard process;
    # the perplexity is the trained model's either way
    for energy in ("eq16", "eq17"):
        soft, hard = (
            json.loads((workdir / f"results/{PRESET}/en-vi/scores/monotonic_{energy}_{mode}.test.json").read_text())
            for mode in ("soft", "hard")
        )
        assert soft["ppl"] == hard["ppl"] is not None and hard["bleu_tok"] is not None
    unk = json.loads((workdir / f"results/{PRESET}/en-de/scores/local_p_general_feed.test.json").read_text())["unk"]
    assert unk["unks"] == unk["from_dictionary"] + unk["copied"] > 0  # the tiny vocabulary leaves <unk>s to replace
    assert json.loads((workdir / f"results/{PRESET}/en-de/scores/base.test.json").read_text())["unk"] is None
    # the figures: learning curves (Figure 5), BLEU by length (6), attention maps with gold (7), samples (Table 5)
    for section in (
        "luong2015_figure5",
        "luong2015_figure6",
        "luong2015_figure7",
        "luong2015_table5",
        "luong2015_table6_alignments",
        "peter2017_figure3",
    ):
        assert f'id="{section}"' in html
    assert "Not drawn" not in html
    for png in (
        "luong2015_table1_learning_curves.png",
        "luong2015_figure6.png",
        "luong2015_figure7.png",
        "luong2015_table6_alignments.png",
        "peter2017_figure3.png",
    ):
        assert (report / png).read_bytes().startswith(b"\x89PNG")

    return shown
