"""End to end: the tiny preset through Snakemake and through DVC, in scratch copies of the repository
(the runs themselves: tests/pipelines.py, started together by tests/conftest.py)."""

import json
import re
import shlex
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.config import plan
from nmt.pipeline.dvc_yaml import read_stages
from nmt.pipeline.jobs import build_jobs

from pipelines import ROOT, assert_same_tables, check_report, evaluations, preset_config, run, scratch_copy, systems

pytestmark = pytest.mark.e2e


@pytest.mark.pipeline("snakemake")
def test_dry_run_lists_one_job_per_step_of_the_plan(tiny_runs):
    """The dry run's job counts are the plan's (nmt.config.plan's collect_* over the tiny preset's tables), counted here
    by the rules of the job records built from it: no count is written down in a test."""
    stats = tiny_runs["snakemake"].results[0].stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    jobs = {
        line.split()[0]: int(line.split()[1])
        for line in stats.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    # one corpus and one prepare rule per task (Snakemake needs each task's split files named in the rule)
    planned = Counter(job.rule for job in build_jobs(preset_config(), ROOT))
    assert {rule: n for rule, n in jobs.items() if rule not in ("all", "total")} == planned
    assert jobs["train"] == sum(map(len, systems().values()))  # one per system of the tables
    assert jobs["translate"] == jobs["evaluate"] == len(evaluations())  # one per shown decoding


@pytest.mark.pipeline("snakemake")
def test_snakemake_runs_the_tiny_preset_to_the_report(tiny_runs):
    workdir = tiny_runs["snakemake"].workdir
    check_report(workdir)
    for task, trained in systems().items():
        for system in trained:
            assert (workdir / f"logs/tiny/{task}/train/{system}.log").exists()
            assert (workdir / f"results/tiny/benchmarks/{task}/train/{system}.tsv").exists()
    html = (workdir / "reports/tiny/index.html").read_text()
    assert 'id="attention-speed"' in html and 'id="monotonic-speed"' in html  # the measured figures
    for png in ("attention_speed.png", "monotonic_speedup.png", "monotonic_decoding.png"):
        assert (workdir / "reports/tiny" / png).exists()
    again = run(["snakemake", "-n", "--cores", "2"], workdir)
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.pipeline("snakemake")
@pytest.mark.pipeline("dvc")
def test_dvc_repro_gives_the_same_report(tiny_runs):
    workdir = tiny_runs["dvc"].workdir
    assert_same_tables(workdir, tiny_runs["snakemake"].workdir)
    # DVC's metrics: each translation's headline numbers, as its scores file has them, and the verdict counts
    shown = next(iter(json.loads(run(["dvc", "metrics", "show", "--json"], workdir).stdout).values()))["data"]
    for task, system, testset in evaluations(workdir):
        scores = json.loads((workdir / f"results/tiny/{task}/scores/{system}.{testset}.json").read_text())
        numbers = shown[f"reports/tiny/metrics.{task}.{system}.{testset}.json"]["data"]
        assert numbers == {key: scores[key] for key in ("bleu_tok", "chrf", "ppl")}
    assert not [path for path in shown if "/scores/" in path]  # the full records are no DVC metrics
    summary = json.loads((workdir / "reports/tiny/claims.json").read_text())["summary"]
    counts = shown["reports/tiny/metrics.claims.json"]["data"]
    assert counts == {
        key: summary[key] for key in ("reproduced", "contradicted", "inconclusive", "single_run", "not_run")
    }
    assert sum(counts.values()) == summary["claims"]


@pytest.mark.pipeline("snakemake")
def test_snakemake_s_own_report_carries_nmt_s_report_with_its_provenance(tiny_runs, tmp_path):
    """`snakemake --report` on the finished run: a zip holding nmt's report (the page, its figures, tables and
    claims) and Snakemake's record of every rule's command and the jobs' runtimes."""
    workdir = tiny_runs["snakemake"].workdir
    bundle = tmp_path / "report.zip"
    run(["snakemake", "--report", str(bundle)], workdir)
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        index = next(name for name in names if name.endswith("/index.html"))  # our page, with its files beside it
        ours = {Path(name).name for name in names if Path(name).parent == Path(index).parent}
        page = next(name for name in names if name.endswith("/report.html"))  # Snakemake's own
        provenance = archive.read(page).decode("utf-8")
    assert {"index.html", "claims.json", "claims.csv", "luong2015_table1.csv", "luong2015_figure6.png"} <= ours, ours
    assert "Paper tables and claims" in provenance and "nmt report" in provenance  # its category and its command
    assert '"rule": "train"' in provenance and '"rule": "translate"' in provenance  # every job, with its runtime


@pytest.mark.pipeline("dvc")
def test_a_code_change_makes_dvc_rerun_the_stages_that_run_it(tiny_runs):
    """After the whole `dvc repro`, a changed nmt/models/seq2seq.py puts every stage that loads a model out of date
    (decoding, evaluation with perplexity, training), and none that does not (corpora, aligners)."""
    workdir = tiny_runs["dvc"].workdir
    # up to date, but for the plan check that runs every time
    assert stage_names(run(["dvc", "status", "--json"], workdir).stdout) <= {"plan"}
    source = workdir / "nmt/models/seq2seq.py"
    text = source.read_text()
    try:
        source.write_text(text + "\n# changed\n")
        changed = stage_names(run(["dvc", "status", "--json"], workdir).stdout)
    finally:
        source.write_text(text)
    stages = read_stages(workdir)
    for step in ("train", "translate", "attention_map", "align_model"):
        names = {name for name in stages if name.startswith(step + ".")}
        assert names and names <= changed, (step, sorted(names - changed))
    assert not {
        name
        for name in changed
        if name.split(".")[0] in {"corpus", "prepare", "align_statistical", "unk_dictionary", "align_score"}
    }


@pytest.mark.pipeline("dvc")
@pytest.mark.parametrize(
    "file, key, value, reruns",
    [
        # a recipe's key that the preset leaves to params.yaml: that recipe's trainings (Peter et al.'s), nothing else
        ("params.yaml", "recipes.rnnsearch.train.eval_every", 5000, "rnnsearch"),
        # a default that the preset and both recipes override: no training reads it
        ("params.yaml", "train.lr", 0.5, None),
        # the preset's own key of Raffel et al.'s recipe: their trainings only
        ("workflow/presets/tiny.yaml", "recipes.monotonic_mt.model.hidden", 48, "monotonic_mt"),
    ],
)
def test_a_changed_training_key_reruns_the_trainings_that_read_it_and_nothing_else(tiny_runs, file, key, value, reruns):
    workdir = tiny_runs["dvc"].workdir
    assert stage_names(run(["dvc", "status", "--json"], workdir).stdout) <= {"plan"}
    path = workdir / file
    text = path.read_text()
    changed_config = yaml.safe_load(text)
    *parents, last = key.split(".")
    section = changed_config
    for name in parents:
        section = section[name]
    assert last in section and section[last] != value, key
    section[last] = value
    try:
        path.write_text(yaml.safe_dump(changed_config, sort_keys=False))
        changed = stage_names(run(["dvc", "status", "--json"], workdir).stdout) - {"plan"}
    finally:
        path.write_text(text)
    config = cfg.load_params(workdir / "params.yaml")
    trainings = {
        f"train.{task}.{system}"
        for task, systems in plan.collect_systems(config, workdir).items()
        for system, table in systems.items()
        if reruns and cfg.load_table(workdir / table).get("recipe") == reruns
    }
    # the report reads the whole configuration (the verdicts' settings, the deviations from the paper preset)
    assert changed == trainings | {"report"} and (trainings or reruns is None), sorted(changed ^ trainings)


def stage_names(status_json: str) -> set[str]:
    """The stages `dvc status --json` lists, by name (a step file's stage is listed as FILE:NAME)."""
    return {key.rsplit(":", 1)[-1] for key in json.loads(status_json)}


# -- where the jobs compute: a job that holds no GPU never takes one ---------------------------------------------
# `nmt` commands that run a model (and without --device compute on a free GPU when CUDA is available,
# nmt/base/devices.py); evaluate only with --model/--models-dir (perplexity), attention only without --links.
MODEL_COMMANDS = {
    ("train",),
    ("translate",),
    ("attention",),
    ("evaluate",),
    ("align", "extract"),
    ("bench", "train"),
    ("bench", "attention"),
}
# dvc.yaml's stages are named STEP.TASK.NAME..., after the Snakemake rule that runs the same command; the one
# stage no rule mirrors checks that dvc.yaml is the preset's plan
DVC_ONLY = {"plan"}


def nmt_commands(shell: str) -> list[list[str]]:
    """The words of every `nmt` command in a shell command line (commands end at && || ; | and redirections)."""
    shell = re.sub(r"\$\([^()]*\)", "SUBSTITUTED", shell)  # $(dirname ...) is an argument, not a command
    lexer = shlex.shlex(shell, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words = [], []
    for token in [*lexer, ";"]:
        if token and set(token) <= set("();<>|&"):  # an operator (quoted words are never one)
            if words[:1] == ["nmt"]:
                commands.append(words)
            words = []
        else:
            words.append(token)
    return commands


def runs_a_model(words: list[str]) -> bool:
    if tuple(words[1:2]) not in MODEL_COMMANDS and tuple(words[1:3]) not in MODEL_COMMANDS:
        return False
    if words[1] == "evaluate":
        return "--model" in words or "--models-dir" in words
    return not (words[1] == "attention" and "--links" in words)


def device_of(words: list[str]) -> str | None:
    """The --device an nmt command is given; None: nmt's default (a free GPU when there is one)."""
    for i, word in enumerate(words):
        if word == "--device":
            return words[i + 1]
        if word.startswith("--device="):
            return word.split("=", 1)[1]
    return None


def dry_run_jobs(workdir) -> list[dict]:
    """Every job of a forced dry run in `workdir`: its rule, outputs, resources and shell command."""
    out = run(["snakemake", "-n", "--forceall", "--printshellcmds", "--cores", "1"], workdir, timeout=300).stdout
    jobs = []
    for block in out.split("\n\n"):
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.M)
        shell = re.search(r"^Shell command: (.*)$", block, re.M)
        if rule and shell:
            resources = re.search(r"resources: (.*)", block)
            outputs = re.search(r"^\s+output: (.*)$", block, re.M)
            inputs = re.search(r"^\s+input: (.*)$", block, re.M)
            jobs.append(
                {
                    "rule": rule.group(1),
                    "shell": shell.group(1),
                    "outputs": outputs.group(1).split(", ") if outputs else [],
                    "inputs": inputs.group(1).split(", ") if inputs else [],
                    "resources": dict(re.findall(r"(\w+)=([^,\s]+)", resources.group(1) if resources else "")),
                }
            )
    return jobs


def devices_by_rule(jobs: list[dict]) -> dict[str, dict]:
    """{rule: {"gpu": whether its jobs hold one, "devices": the --device of its model commands}}; every job of a
    rule must pass the device check: a job without the `gpu` resource says --device cpu to every command that runs
    a model, and a job with one never forces the CPU."""
    rules = {}
    for job in jobs:
        gpu = int(job["resources"].get("gpu", 0)) > 0
        entry = rules.setdefault(re.sub(r"^(corpus|prepare)_\w+$", r"\1", job["rule"]), {"gpu": gpu, "devices": set()})
        assert entry["gpu"] == gpu, job
        for words in nmt_commands(job["shell"]):
            if runs_a_model(words):
                device = device_of(words)
                assert device == ("cpu" if not gpu else None), (job["rule"], gpu, " ".join(words))
                entry["devices"].add(device)
    return rules


def test_nmt_commands_are_found_in_shell_lines():
    line = (
        "(nmt align symmetrize --forward a && nmt align extract --model m.pt --out $(dirname x) --device cpu)"
        " > log 2>&1"
    )
    assert nmt_commands(line) == [
        ["nmt", "align", "symmetrize", "--forward", "a"],
        ["nmt", "align", "extract", "--model", "m.pt", "--out", "SUBSTITUTED", "--device", "cpu"],
    ]
    assert [runs_a_model(w) for w in nmt_commands(line)] == [False, True]
    assert device_of(nmt_commands(line)[1]) == "cpu" and device_of(["nmt", "train"]) is None
    assert not runs_a_model(["nmt", "evaluate", "--hyp", "h"]) and runs_a_model(["nmt", "evaluate", "--model", "m"])
    assert not runs_a_model(["nmt", "attention", "--links", "l"]) and runs_a_model(["nmt", "bench", "train"])


def test_cpu_jobs_say_device_cpu_to_every_command_that_runs_a_model_and_gpu_jobs_do_not(tmp_path):
    rules = devices_by_rule(dry_run_jobs(scratch_copy(tmp_path / "tiny")))
    # the tiny preset as shipped: train and decode jobs hold a GPU, the others none
    assert {rule for rule, entry in rules.items() if entry["gpu"]} == {
        "train",
        "translate",
        "attention_map",
        "align_model",
        "align_training_model",
    }
    assert rules["evaluate"]["devices"] == rules["bench_attention"]["devices"] == {"cpu"}  # test perplexity
    assert rules["train"]["devices"] == rules["translate"]["devices"] == {None}

    # dvc.yaml runs the same commands: where Snakemake's job holds a GPU, its stage takes nmt's default device;
    # where it holds none, --device cpu
    stages = read_stages(ROOT)
    checked = set()
    for stage, spec in stages.items():
        rule = stage.split(".")[0]
        if rule in DVC_ONLY:
            continue
        assert rule in rules, f"dvc.yaml stage {stage} mirrors no Snakemake rule"
        cmds = spec["cmd"]
        for cmd in [cmds] if isinstance(cmds, str) else cmds:
            for words in nmt_commands(cmd):
                if runs_a_model(words):
                    assert device_of(words) == (None if rules[rule]["gpu"] else "cpu"), (stage, " ".join(words))
                    checked.add(stage.split(".")[0])
    assert {"evaluate", "bench_attention", "train", "translate", "align_model", "attention_map"} <= checked


def test_a_preset_that_decodes_without_gpus_decodes_on_the_cpu(tmp_path):
    workdir = scratch_copy(tmp_path / "cpu_decoding")
    preset = workdir / "workflow/presets/tiny.yaml"
    settings = yaml.safe_load(preset.read_text())
    settings["cluster"]["decode"]["gpus"] = 0
    preset.write_text(yaml.safe_dump(settings, sort_keys=False))
    rules = devices_by_rule(dry_run_jobs(workdir))
    assert {rule for rule, entry in rules.items() if entry["gpu"]} == {"train"}
    for rule in ("translate", "attention_map", "align_model", "align_training_model"):
        assert rules[rule]["devices"] == {"cpu"}, rule


@pytest.mark.parametrize("preset, seeds", [("tiny", None), ("demo", None), ("paper", None), ("tiny", [1, 2])])
def test_every_snakemake_job_and_every_dvc_stage_is_one_job_record(tmp_path, preset, seeds):
    """The two engines run one list of jobs (nmt.pipeline.jobs): Snakemake's dry run has one job per record, run by
    its step's rule, writing the record's outputs from its inputs with its commands (its own thread count, the
    device option of its resources and its log added); dvc.yaml has one stage per record, named by it (what
    `nmt dvc-yaml` writes from the records is checked by tests/pipeline/test_dvc_pipeline.py). With train.seeds, both
    train every system once per seed, and decode, score and align each run (an ensemble of each seed's runs, a
    statistical aligner once per seed too); with unk.credit, every decoding is told it."""
    workdir = scratch_copy(tmp_path / preset)
    params = yaml.safe_load((workdir / "params.yaml").read_text())
    (workdir / "params.yaml").write_text(yaml.safe_dump({**params, "preset": preset}, sort_keys=False))
    if seeds:  # and unk replacement crediting every model's attention by one rule
        preset_file = workdir / "workflow/presets" / f"{preset}.yaml"
        spec = yaml.safe_load(preset_file.read_text())
        spec["train"] = {**spec.get("train", {}), "seeds": seeds}
        spec["unk"] = {"credit": "predicted"}
        preset_file.write_text(yaml.safe_dump(spec, sort_keys=False))
    run([sys.executable, "-m", "nmt.cli", "dvc-yaml"], workdir)
    records = list(build_jobs(cfg.load_params(workdir / "params.yaml"), workdir))
    by_outputs = {frozenset(job.outputs): job for job in records}
    dry_run = [job for job in dry_run_jobs(workdir) if job["rule"] != "all"]
    assert len(dry_run) == len(records) == len(by_outputs)
    for found in dry_run:
        job = by_outputs[frozenset(found["outputs"])]
        assert found["rule"] == job.rule, job.name
        assert set(found["inputs"]) == set(job.inputs), job.name
        device = "" if int(found["resources"].get("gpu", 0)) else " --device cpu"
        assert found["shell"] == f"{job.shell(1, device)} > {job.log} 2>&1", job.name
    stages = {name for name in read_stages(workdir) if name not in DVC_ONLY}
    assert stages == {job.name for job in records}
    if seeds:
        trained = {job.name.split(".")[2] for job in records if job.step.name == "train"}
        assert {"base", "base_seed2", "rnnsearch_tf_frozen_seed2", "monotonic_eq17_seed2"} <= trained
        assert len(trained) == 2 * len({name for name in trained if "_seed" not in name})
        frozen = next(job for job in records if job.name == "train.de-en.rnnsearch_tf_frozen_seed2")
        assert "--init-from results/tiny/de-en/models/rnnsearch_seed2/model.pt" in frozen.shell(1, "")
        for decoded in (
            "translate.en-vi.monotonic_eq17_hard_seed2.test",
            "align_score.de-en.rnnsearch_seed2.align",
            "translate.en-de.ensemble_attention_seed2.test2",  # the ensemble of the seed-2 runs
            "align_statistical.en-de.eflomal_full_seed2.align",
        ):  # an aligner run per seed
            assert decoded in stages
        assert all(" --credit predicted " in job.shell(1, "") for job in records if job.step.name == "translate")
