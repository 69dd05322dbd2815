"""A run's report inputs (nmt.report.inputs) from the preset's plan (nmt.config.plan) and the run's files: what
`nmt report` renders, with the warnings it gives about what is missing."""

from __future__ import annotations

from pathlib import Path

from .. import config as cfg
from ..config import plan
from ..data.tasks import data_task
from ..records.benchmarks import benchmark_path
from ..records.model_info import model_info_path, read_model_info
from ..records.run_identity import run_identity
from ..records.scores import run_scores_path
from ..settings import Params
from .claims import ClaimJudge, adjust, training_convergence
from .context import report_context
from .deviations import claim_scopes, deviations
from .headings import corpus_in_words
from .inputs import ReportInputs
from .partial import partial_record, runs_in, scored_runs
from .render import SPEED_VIEWS, check_scores, training_problems


def expected_scores(config: dict, root: Path, results: Path) -> dict[tuple[str, str, str], Path]:
    """{(task, run, testset): its scores file below ``results``} of every scores file the preset's tables and figures
    read (translations' and alignments')."""
    wanted = dict.fromkeys(
        [
            *plan.collect_evaluations(config, root),
            *((a["task"], a["name"], a["split"]) for a in plan.collect_alignments(config, root)),
        ]
    )
    return {(task, name, testset): run_scores_path(results, task, name, testset) for task, name, testset in wanted}


def recorded_configs(results: Path, trained: dict[str, dict]) -> dict[tuple[str, str], dict]:
    """{(task, system): the config its model info records} of the trainings there are (what the run record describes
    them by: nmt.records.run_identity.run_identity)."""
    out = {}
    for task, systems in trained.items():
        for system in systems:
            path = model_info_path(results, task, system)
            if path.is_file():
                out[(task, system)] = read_model_info(path)["config"]
    return out


def report_inputs(
    config: dict, params: str | Path, results: Path, data: Path, *, partial: bool = False
) -> tuple[ReportInputs, list[str]]:
    """The inputs of the report of the run in ``results`` (results/{preset}) on the data in ``data``
    (data/{preset}), for ``config``, the preset of the params file ``params``; and the warnings to give with it.
    ``partial``: render a run with fewer than half of its scores files (else refused, nmt.report.render's
    check_scores)."""
    root = Path(params).parent
    tables = [root / t for t in config["tables"]]
    # Outputs are namespaced by task (results/{preset}/{task}/...); the preset says which corpus plays it.
    pairs = {task: data_task(config, task) for task in config["data"]["tasks"]}
    trained = plan.collect_systems(config, root)  # the trainings whose records the report reads
    claim_specs = plan.collect_claims(config, root)  # a bad claims file is said before the results are looked at
    # a mistyped --results or a run not made yet: refused rather than a page of MISSING over a good report
    expected = expected_scores(config, root, results)
    missing = check_scores(list(expected.values()), results, config["preset"], partial=partial)
    found = {key: path.is_file() for key, path in expected.items()}
    made = partial_record(found, plan.preset_seeds(config))  # how much of the planned run is in (None: all)
    # --partial on a run made one seed at a time: its rows are the means of the seed runs there are ("1 of 3 runs")
    by_seeds = made if partial and len(plan.preset_seeds(config)) > 1 else None
    problems = training_problems(results, trained)
    context = report_context(config, data, results, trained)
    speed = {}
    for name in SPEED_VIEWS:  # benchmarks/NAME.json: written by `nmt bench NAME` (the DAG's bench_NAME step)
        bench_file = benchmark_path(results, name)
        if bench_file.is_file():
            speed[name] = bench_file
    unavailable = plan.unavailable_tables(config, root)
    tables_by_id = {cfg.load_table(path)["id"]: cfg.load_table(path) for path in tables}
    runs = plan.collect_runs(config, root)
    paper = cfg.load_params(params, "paper")
    differ = deviations(config, paper, config["tables"], root)
    params = Params.read(config)
    rule = params.verdicts
    # --partial: the claims are judged on the runs there are (fewer than planned: the verdicts say how many)
    judged_runs = runs_in(runs, scored_runs(found)) if by_seeds else runs
    judge = ClaimJudge(
        results_dir=results,
        preset=config["preset"],
        tables_by_id=tables_by_id,
        pair_for_task=pairs,
        benchmarks=speed,
        runs=judged_runs,
        planned=runs,
        rule=rule,
        scopes=claim_scopes(config, paper, config["tables"], differ, root),
        ensembles=plan.collect_ensembles(config, root),
        languages={task: cfg.corpus_for_task(config, task)["tgt_lang"] for task in pairs},
        unavailable={cfg.load_table(root / t)["id"]: why for t, why in unavailable.items()},
    )
    claims = adjust([judge.judge(claim) for claim in claim_specs])
    synthetic = all(cfg.corpus_for_task(config, task)["corpus"] == "synth" for task in pairs)
    inputs = ReportInputs(
        preset=config["preset"],
        preset_description=params.description,
        tables=tables,
        results_dir=results,
        pair_for_task=pairs,
        context=context,
        speed=speed,
        figures=plan.collect_figures(config, root),
        data_dir=data,
        unavailable={root / t: why for t, why in unavailable.items()},
        claims=claims,
        claim_files=list(params.claims),
        runs=runs,
        deviations=differ,
        synthetic=synthetic,
        trainings=training_convergence(results, trained, rule.converged_within, rule.converged_window),
        run={**run_identity(config, root, recorded_configs(results, trained)), **({"partial": made} if made else {})},
        problems=problems,
        partial=by_seeds,
        ran_on={task: corpus_in_words(cfg.corpus_for_task(config, task)) for task in pairs},
        translations=plan.collect_evaluations(config, root),
    )
    warnings = []
    if missing:
        shown = f"{made['text']}; each row is the mean of the runs it has" if by_seeds else "their rows say MISSING"
        warnings.append(f"a partial report: {len(missing)} of its {len(expected)} scores files are missing ({shown})")
    if problems:
        warnings.append(
            f"{len(problems)} training{'s' if len(problems) > 1 else ''} with incomplete records "
            f"(listed at the top of the page): {'; '.join(problems)}"
        )
    return inputs, warnings
