"""What the report page holds, section by section, without a browser: settings shown as what differs, no section left
empty, no paper column of dashes, one banner, and where a table's paper numbers come from (tests/pipeline/test_report_browser.py
measures the same page's width in Chromium)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import yaml

from nmt.config.table_files import load_table
from nmt.report import ReportInputs, render_report
from nmt.report.render import fmt_value
from nmt.report.setting_changes import settings_view

REPO = Path(__file__).resolve().parents[2]
SIG = "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0"

TRANSLATION = {
    "id": "mt_table",
    "title": "Toy translation table",
    "paper": "A paper",
    "task": "en-de",
    "testset": "test",
    "columns": ["ppl", "bleu_tok", "chrf"],
    "systems": {"base": {}, "attn": {"model": {"attention": "global"}}},
    "rows": [
        {"label": "Base", "system": "base", "paper": {"ppl": 10.6, "bleu_tok": 11.3}},
        {"label": "Attention", "system": "attn", "paper": {"ppl": 7.3, "bleu_tok": 16.8}},
    ],
}
# an alignment-style table: no BLEU or chrF column, and it trains nothing (its system is another table's)
ALIGNMENT = {
    "id": "aer_table",
    "title": "Toy AER table",
    "paper": "A paper",
    "task": "en-de",
    "testset": "test",
    "columns": ["aer"],
    "systems": {},
    "ensembles": {"both": {"members": ["base", "attn"]}},
    "rows": [{"label": "Both", "system": "both", "paper": {"aer": 0.34}}],
}
SETTINGS = {
    "optimizer": "sgd",
    "lr": 1.0,
    "epochs": 10,
    "batch_size": 64,
    "plateau": {"within": 0.01, "halvings": 2, "patience": 2},
}


def text_of(page: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def render(tmp_path: Path, tables: list[dict], **kwargs) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    files = []
    for table in tables:
        files.append(tmp_path / f"{table['id']}.yaml")
        files[-1].write_text(yaml.safe_dump(table, sort_keys=False), encoding="utf-8")
    results = tmp_path / "results" / "demo"
    scores = results / "synth" / "scores"
    scores.mkdir(parents=True, exist_ok=True)
    for system, bleu in (("base", 3.2), ("attn", 12.5)):
        (scores / f"{system}.test.json").write_text(
            json.dumps(
                {
                    "system": system,
                    "testset": "test",
                    "ppl": 9.0,
                    "bleu_tok": bleu,
                    "bleu_tok_signature": SIG,
                    "chrf": 30.0 + bleu,
                    "chrf_signature": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",
                }
            )
        )
    (scores / "both.test.json").write_text(json.dumps({"system": "both", "testset": "test", "aer": 0.4}))
    out = tmp_path / "report"
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=files,
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            **{"context": {}, **kwargs},
        ),
        out,
    )
    return index.read_text()


def section(page: str, sid: str) -> str:
    start = page.index(f'<section id="{sid}">')
    return page[start : page.index("</section>", start)]


def test_the_settings_show_what_differs_between_systems_and_from_the_preset():
    systems = {
        "a": {**SETTINGS, "device": "cpu"},
        "b": {**SETTINGS, "device": "cpu"},
        "c": {**SETTINGS, "lr": 0.5, "device": "cuda"},
    }
    view = settings_view(systems, {**SETTINGS, "epochs": 12}, fmt_value)
    shared = {r["key"]: (r["value"], r["preset"], r["differs"]) for r in view["shared"]}
    assert shared == {
        "optimizer": ("sgd", "sgd", False),
        "epochs": ("10", "12", True),
        "batch_size": ("64", "64", False),
        "plateau.within": ("0.01", "0.01", False),
        "plateau.halvings": ("2", "2", False),
        "plateau.patience": ("2", "2", False),
    }
    assert view["columns"] == [{"key": "lr", "preset": "1"}, {"key": "device", "preset": None}]
    assert [(g["systems"], [(c["value"], c["differs"]) for c in g["cells"]]) for g in view["groups"]] == [
        (["a", "b"], [("1", False), ("cpu", False)]),
        (["c"], [("0.5", True), ("cuda", False)]),
    ]
    assert view["count"] == 3 and len(view["full"]["rows"]) == 3 and len(view["full"]["columns"]) == 8
    assert settings_view({}, SETTINGS, fmt_value) is None


def test_the_page_lists_shared_settings_once_and_the_full_grid_behind_a_details_element(tmp_path):
    training = {f"system{k}": {**SETTINGS, "lr": 0.5 if k == 3 else 1.0} for k in range(12)}
    page = render(tmp_path, [TRANSLATION], context={"training": training, "preset_training": SETTINGS})
    how = section(page, "how")
    shown = how[how.index("<h3>Training settings</h3>") :]
    visible, details = shown[: shown.index("<details>")], shown[shown.index("<details>") :]
    assert text_of(visible).count("sgd") == 1  # the shared optimizer once, not once per system
    assert "system3" in visible and "preset: 1" in text_of(visible)
    assert '<td class="differs">0.5</td>' in visible
    assert all(f"system{k}" in details for k in range(12)) and "Every system&#8217;s settings (12" in details


def test_no_empty_section_and_no_column_of_paper_dashes(tmp_path):
    page = render(tmp_path, [TRANSLATION, ALIGNMENT])
    aer = section(page, "aer_table")
    assert "sacreBLEU" not in aer and "Learning curves" not in aer and "No training metrics" not in aer
    mt = section(page, "mt_table")
    assert "sacreBLEU signatures of the reproduced BLEU and chrF (4)" in mt and SIG in mt
    assert "<h3>Learning curves</h3>" not in mt  # these systems left no metrics.jsonl: said once at the top
    assert "paper ppl" in mt and "paper BLEU (tok)" in mt and "paper chrF2" not in mt and "ours chrF2" in mt
    assert "chrF2: no paper value in this table, ours only." in text_of(mt)
    rows = re.findall(r"<tr class=\"measured\">(.*?)</tr>", mt, flags=re.DOTALL)
    assert [len(re.findall(r"<td class=\"num paper\">", row)) for row in rows] == [2, 2]


def test_one_banner_says_both_that_the_pair_is_synthetic_and_that_the_numbers_are_not_comparable(tmp_path):
    page = render(
        tmp_path, [TRANSLATION], synthetic=True, context={"corpora_in_words": "synth (for en-de, de-en)", "corpora": {}}
    )
    assert page.count('class="banner"') == 1
    banner = text_of(page[page.index('class="banner"') : page.index("</div>", page.index('class="banner"'))])
    assert "A synthetic language pair" in banner and "synth (for en-de, de-en)" in banner
    assert "NOT comparable in absolute value" in banner and "no evidence about the papers" in banner
    reduced = render(tmp_path / "reduced", [TRANSLATION])
    assert reduced.count('class="banner"') == 1 and "Reduced-scale runs" in reduced
    assert "A synthetic language pair" not in reduced


def test_a_table_says_where_its_paper_numbers_come_from(tmp_path):
    page = render(tmp_path, [{**TRANSLATION, "paper_source": "Some et al. (2018), Table 2"}])
    assert "(their source: Some et al. (2018), Table 2)" in text_of(section(page, "mt_table"))
    raffel = load_table(REPO / "workflow/tables/raffel2017_table4.yaml")
    assert raffel["paper_source"].startswith("unknown, every paper cell")
    assert all(row["paper"] == {} for row in raffel["rows"])  # none typed in without a source


def test_the_settings_table_has_a_row_per_training_even_when_two_pairs_train_one_name(tmp_path):
    """de-en/global_location trained with patience 1 among patience 2 shows as its own training: the page's settings
    are keyed by pair and system, never by a system name one pair's training hides behind."""
    import json

    from nmt import config as cfg
    from nmt.report.context import report_context
    from nmt.report.setting_changes import settings_view

    from pipelines import ROOT

    published = ROOT / "docs/reproductions/small-gpu/results"
    for pair, patience in (("en-de", 2), ("de-en", 1)):
        meta = json.loads((published / pair / "models/global_location/model.json").read_text())
        meta["plateau"]["patience"] = meta["config"]["train"]["plateau"]["patience"] = patience
        path = tmp_path / "results" / pair / "models/global_location/model.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(meta))
    config = cfg.load_params(ROOT / "params.yaml", "small-gpu")
    trained = {"en-de": {"global_location": None}, "de-en": {"global_location": None}}
    context = report_context(config, tmp_path / "data", tmp_path / "results", trained)
    assert set(context["training"]) == {"en-de/global_location", "de-en/global_location"}
    view = settings_view(context["training"], context["preset_training"], str)
    assert view["count"] == 2 and len(view["groups"]) == 2  # the two trainings differ: not "patience 2 the same"


def test_a_report_given_another_runs_data_is_refused_naming_both(tmp_path):
    """Each training records the fingerprint of the prepared data it read (model.json's data): a report whose --data
    holds another corpus for that pair (the demo's data given to a tiny report) is one line, not another run's corpus
    sizes on this run's page."""
    import json

    import pytest

    from nmt import config as cfg
    from nmt.base.errors import InputError
    from nmt.data.prepare import prepare, prepared_fingerprint
    from nmt.data.synth import generate
    from nmt.report.context import report_context

    from pipelines import ROOT

    for name, seed in (("ours", 3), ("theirs", 4)):
        generate(tmp_path / name / "raw", seed=seed, n_train=60, n_dev=10, n_test=10, n_align=2, max_len=8)
        prepare(
            tmp_path / name / "raw",
            tmp_path / name / "en-de" / "prepared",
            splits=["train", "dev", "test"],
            src_lang="en",
            tgt_lang="de",
            max_len=8,
            src_vocab=50,
            tgt_vocab=50,
        )
    published = ROOT / "docs/reproductions/small-gpu/results/en-de/models/base/model.json"
    meta = json.loads(published.read_text())
    ours = tmp_path / "ours" / "en-de" / "prepared"
    meta["data"] = {"dir": str(ours), "fingerprint": prepared_fingerprint(ours)}
    path = tmp_path / "results" / "en-de" / "models" / "base" / "model.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(meta))
    config = cfg.load_params(ROOT / "params.yaml", "small-gpu")
    trained = {"en-de": {"base": None}}
    assert report_context(config, tmp_path / "ours", tmp_path / "results", trained)["training"]
    with pytest.raises(
        InputError,
        match=rf"{path}: trained on the data in {ours} \(fingerprint "
        rf"{prepared_fingerprint(ours)}\), not on {tmp_path / 'theirs'}/en-de/prepared",
    ):
        report_context(config, tmp_path / "theirs", tmp_path / "results", trained)
