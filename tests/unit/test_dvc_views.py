"""What DVC's own views show (issue 60, item 3): `dvc metrics show` reads the report's headline files, a few keys
each (a scored translation's BLEU, chrF and perplexity, the claims' verdict counts), and `dvc plots show` the
report's learning-curve images; the full records stay in the scores files, which are no DVC metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.base import layout
from nmt.config import plan
from nmt.pipeline.dvc_yaml import views
from nmt.pipeline.jobs import build_jobs
from nmt.records import headline
from nmt.records.scores import read_scores, run_scores_path, write_scores
from nmt.report import ReportInputs, render_report

ROOT = Path(__file__).resolve().parents[2]

TABLE = {
    "id": "toy",
    "title": "Toy",
    "paper": "Luong et al. (2015)",
    "task": "en-de",
    "testset": "test",
    "columns": ["ppl", "bleu_tok", "chrf"],
    "systems": {"base": {"model": {"attention": "none"}}, "attn": {"model": {"attention": "global"}}},
    "ensembles": {"both": {"members": ["base", "attn"], "combine": "prob"}},
    "rows": [
        {"label": "Base", "system": "base", "paper": {"bleu_tok": 11.3}},
        {"label": "Attention", "system": "attn", "paper": {"bleu_tok": 16.8}},
        {"label": "Ensemble", "system": "both", "paper": {"bleu_tok": 18.0}},
    ],
}
SCORES = {
    "base": {"bleu_tok": 3.21, "bleu_detok": 3.05, "chrf": 30.5, "ppl": 14.37},
    "attn": {"bleu_tok": 12.48, "bleu_detok": 11.96, "chrf": 41.25, "ppl": 9.83},
    "both": {"bleu_tok": 13.5, "bleu_detok": 12.75, "chrf": 42.0, "ppl": None},
}  # an ensemble: no perplexity


@pytest.fixture
def report(tmp_path) -> tuple[Path, Path, list[tuple[str, str, str]]]:
    """(results directory, report directory, translations) of a toy run whose attention system was not scored."""
    results = tmp_path / "results" / "demo"
    for system, scores in SCORES.items():
        if system != "attn":
            write_scores(
                run_scores_path(results, "en-de", system, "test"),
                {
                    "system": system,
                    "testset": "test",
                    "preset": "demo",
                    "pair": "en-de",
                    "n_sentences": 9,
                    **scores,
                    "chrf_signature": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.3",
                },
            )
    table = tmp_path / "toy.yaml"
    table.write_text(yaml.safe_dump(TABLE, sort_keys=False), encoding="utf-8")
    translations = [("en-de", system, "test") for system in SCORES]
    out = tmp_path / "report"
    render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=[table],
            results_dir=results,
            pair_for_task={"en-de": "en-de"},
            context={},
            translations=translations,
        ),
        out,
    )
    return results, out, translations


def test_each_scored_translation_s_headline_is_its_scores_file_s_bleu_chrf_and_perplexity(report):
    results, out, translations = report
    written = []
    for pair, system, testset in translations:
        path = headline.headline_path(out, pair, system, testset)
        scores = run_scores_path(results, pair, system, testset)
        if not scores.is_file():  # a partial run: no headline for what is not scored
            assert not path.exists()
            continue
        full = read_scores(scores)
        assert headline.read_headline(path) == {"bleu_tok": full["bleu_tok"], "chrf": full["chrf"], "ppl": full["ppl"]}
        written.append(path.name)
    assert written == ["metrics.en-de.base.test.json", "metrics.en-de.both.test.json"]
    assert headline.read_headline(out / written[1])["ppl"] is None  # shown by DVC as an empty cell
    # no claims judged: every count is 0, each under its own key
    assert headline.read_verdicts(headline.verdicts_path(out)) == dict.fromkeys(headline.VERDICT_KEYS, 0)


def test_the_report_without_translations_writes_the_verdict_counts_alone(tmp_path):
    table = tmp_path / "toy.yaml"
    table.write_text(yaml.safe_dump(TABLE, sort_keys=False), encoding="utf-8")
    out = tmp_path / "report"
    render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=[table],
            results_dir=tmp_path / "results" / "demo",
            pair_for_task={"en-de": "en-de"},
            context={},
        ),
        out,
    )
    assert sorted(p.name for p in out.glob("metrics.*")) == [headline.VERDICTS_NAME]


def test_dvc_yaml_shows_the_headlines_and_the_learning_curves_at_its_top():
    """The metrics: one headline per evaluation and the verdict counts; the plots: the learning curves of every table
    with a system of its own; all inside the report directory (so no stage declares them: top level). No stage keeps
    metrics or data plots of its own (the scores files and the curves' CSV are plain outputs)."""
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    jobs = build_jobs(config, ROOT)
    shown = views(jobs)
    report = layout.path(layout.REPORT, preset="tiny")
    assert shown["metrics"] == [
        *(
            layout.path(layout.REPORT_HEADLINE, preset="tiny", pair=task, system=system, testset=testset)
            for task, system, testset in plan.collect_evaluations(config, ROOT)
        ),
        layout.path(layout.REPORT_VERDICTS, preset="tiny"),
    ]
    with_systems = {
        cfg.load_table(ROOT / path)["id"] for path in config["tables"] if cfg.load_table(ROOT / path)["systems"]
    }
    assert shown["plots"] == [
        layout.path(layout.REPORT_LEARNING_CURVES, preset="tiny", table=table)
        for table in plan.learning_curve_tables(config, ROOT)
    ]
    assert set(plan.learning_curve_tables(config, ROOT)) == with_systems
    assert all(path.startswith(report + "/") for paths in shown.values() for path in paths)
    assert all(not job.metrics and not job.plots for job in jobs if job.step.name != "report")
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    assert set(committed) == {"metrics", "plots", "stages"}
    assert all(path.startswith("reports/demo/metrics.") for path in committed["metrics"])
