"""What a report is rendered from (nmt.report.render's render_report): one object, assembled from a run by
nmt.report.assemble or built directly (the tests)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class ReportInputs:
    """The report of ``results_dir`` (= ``results/{preset}``).

    For a table with task T the corpus pair is ``pair_for_task[T]``; scores are read from
    ``results_dir/pair/scores`` and model info from ``results_dir/pair/models/{system}/``. ``context``: the data
    and models the page describes (nmt.report.context.report_context). ``speed`` maps a benchmark name (a key of
    nmt.report.render's SPEED_VIEWS) to the JSON file its `nmt bench` command wrote; each becomes a section with
    figures. ``figures`` are the preset's figure-file entries as (task, figure) (nmt.config.plan.collect_figures);
    their inputs are read from ``results_dir`` and ``data_dir`` (= ``data/{preset}``): see nmt.report.figures.
    ``unavailable`` maps a table file to why the preset cannot measure it (its rows are shown as not run).
    ``claims`` are the judged claims (nmt.report.claims.ClaimJudge) of ``claim_files``: the Claims section, and
    the claims file and ``claims.csv`` beside the page. ``runs`` ({task: {system: [its seed runs]}},
    nmt.config.plan.collect_runs): rows of systems trained with several seeds show mean +/- standard deviation.
    ``deviations`` (nmt.report.deviations): how the preset's runs differ from the papers', listed near the top.
    ``synthetic``: the preset's corpora are synthetic (the demo's): the Claims section opens by saying that its
    verdicts are no evidence about the papers. ``trainings``: the convergence gate on every training
    (nmt.report.claims.training_convergence), listed in the Claims section and the claims file.
    ``machine``: the machine that renders it (nmt.base.environment.describe(); default: this one's): with where the
    trainings ran and their cost, the Environment and cost section (nmt.report.cost), ``environment.json`` and
    the claims file's ``environment``. ``run``: the run's identity (nmt.records.run_identity), the claims file's
    ``run``, which `nmt compare` checks. ``problems``: what is wrong with the trainings' records
    (nmt.report.render's training_problems), listed at the top of the page. ``partial``: how much of a run made one
    seed at a time is in (nmt.report.partial.partial_record), said at the top of the page; its rows are the means
    of the runs there are. ``ran_on``: {task: the corpus that played it, in words (nmt.report.headings)}: what the
    headings say was run (default: the corpus pair's name). ``translations``: (pair, system, testset) of every
    translation the preset scores (nmt.config.plan.collect_evaluations): their headline numbers, and the claims'
    verdict counts, go beside the page as DVC's metrics (nmt.records.headline).
    """

    preset: str
    preset_description: str
    tables: list[Path]
    results_dir: Path
    pair_for_task: dict[str, str]
    context: dict
    speed: dict[str, Path] | None = None
    figures: list[tuple[str, dict]] | None = None
    data_dir: Path | None = None
    unavailable: dict[Path, str] | None = None
    claims: list[dict] | None = None
    claim_files: list[str] | None = None
    runs: dict[str, dict[str, list[str]]] | None = None
    deviations: dict | None = None
    machine: dict | None = None
    synthetic: bool = False
    trainings: list[dict] | None = None
    run: dict | None = None
    problems: list[str] | None = None
    partial: dict | None = None
    ran_on: dict[str, str] | None = None
    translations: list[tuple[str, str, str]] | None = None

    def as_dict(self) -> dict:
        """The fields by name, as given (not copied)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}
