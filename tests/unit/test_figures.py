"""Figure files and what the preset's tables and figures make the workflow run: validation with messages naming
the file and figure, cross-table ensembles, the translations and attention matrices to produce, the generated
DVC variables, and the report's figure sections built from files (never typed in)."""

import json
from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.base import layout
from nmt.base.atomic import write_json_atomic
from nmt.config import plan
from nmt.config.figure_files import load_figures
from nmt.data.text import write_lines_atomic
from nmt.report.figures import FigureInputs, figure_view, pick_samples
from nmt.scoring.bleu import bleu_by_length

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "workflow/figures/luong2015.yaml"


def write_yaml(path: Path, obj) -> Path:
    path.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    return path


def shipped():
    return yaml.safe_load(FIGURES.read_text())


def test_shipped_figure_file_loads():
    figures = load_figures(FIGURES)
    assert [f["kind"] for f in figures["figures"]] == [
        "learning_curves",
        "bleu_by_length",
        "attention_maps",
        "attention_maps",
        "samples",
    ]
    assert figures["figures"][2]["length"] == [10, 16] and figures["figures"][2]["gold"] is True


@pytest.mark.parametrize(
    "change, message",
    [  # the schema's (schemas/figures.schema.yaml), then the checks after it
        (lambda f: f["figures"][0].update(kind="pie"), r"figures\[1\]\.kind: 'pie' is not one of \['learning_curves'"),
        (lambda f: f["figures"][1].pop("testset"), r"figure 2 \(luong2015_figure6\): 'testset' is a required property"),
        (lambda f: f["figures"][1].update(colour="red"), r"figure 2 .*Additional properties .*'colour' was unexpected"),
        (lambda f: f["figures"][2].update(length=[16, 10]), r"figure 3 .*length: must be \[min, max\]"),
        (lambda f: f["figures"][2].update(length=[10]), r"figure 3 .*length: \[10\] is too short"),
        (lambda f: f["figures"][1]["lines"][0].pop("label"), r"figure 2 .*lines\[1\]: 'label' is a required property"),
        (lambda f: f["figures"][4].update(count=0), r"figure 5 .*count: 0 is less than the minimum of 1"),
        (lambda f: f["figures"][4].update(id="luong2015_figure5"), r"figure id 'luong2015_figure5' is used twice"),
        (lambda f: f.update(task=3), r"figs\.yaml: task: 3 is not of type 'string'"),
    ],
)
def test_bad_figure_files_are_named(tmp_path, change, message):
    data = shipped()
    change(data)
    with pytest.raises(ValueError, match=message) as err:
        load_figures(write_yaml(tmp_path / "figs.yaml", data))
    assert str(tmp_path / "figs.yaml") in str(err.value)


def demo():
    return cfg.load_params(ROOT / "params.yaml", "demo")


def test_evaluations_are_what_tables_and_figures_show():
    evaluations = plan.collect_evaluations(demo(), ROOT)
    # 14 En->De systems + ensemble, 4 De->En, Table 2; Peter et al.'s follow-up: 3 De->En RNNsearch systems;
    # Raffel Table 4: 5 greedy decodings of 3 En->Vi systems (their own default-beam translation is not shown)
    assert len(evaluations) == len(set(evaluations)) == 28
    assert not [e for e in evaluations if e[0] == "en-vi" and e[1] in ("monotonic_eq16", "softmax_dot")]
    assert ("en-de", "ensemble_attention", "test2") in evaluations  # Table 2: the ensemble on the second test set
    assert not [e for e in evaluations if e[2] == "test2" and e[1] != "ensemble_attention"]  # members: inside it
    assert ("de-en", "global_dot_dropout_feed", "test") in evaluations


def test_attention_maps_need_the_gold_aligned_split():
    assert plan.collect_attention_maps(demo(), ROOT) == {
        # Luong et al.'s Figure 7, and Table 6's rows: its ensemble, and eflomal's links
        **{
            ("en-de", s, "align"): [10, 16]
            for s in (
                "global_location_feed",
                "local_m_general_feed",
                "local_p_general_feed",
                "ensemble_attention",
                "eflomal_full",
            )
        },
        **{
            ("de-en", s, "align"): [10, 16]  # Peter et al.'s Figure 3: Table 1's trained systems and aligners
            for s in (
                "rnnsearch",
                "eflomal_hmm",
                "eflomal_full",
                "rnnsearch_guided",
                "rnnsearch_tf_frozen",
                "rnnsearch_tf_guided",
            )
        },
    }
    small = cfg.load_params(ROOT / "params.yaml", "small")  # Multi30k: no gold alignments
    assert plan.collect_attention_maps(small, ROOT) == {}
    maps = [f for _, f in plan.collect_figures(small, ROOT) if f["kind"] == "attention_maps"]
    assert [f["id"] for f in maps] == ["luong2015_figure7", "luong2015_table6_alignments", "peter2017_figure3"]
    # (Figure 3's systems are not even trained there: its table has nothing to measure either)
    assert all("has no 'align' split" in f["unavailable"] for f in maps)


def with_tables(tmp_path, tables: dict, figures=None) -> dict:
    config = demo()
    config["tables"] = [str(write_yaml(tmp_path / f"{name}.yaml", t)) for name, t in tables.items()]
    config["figures"] = [str(write_yaml(tmp_path / "figs.yaml", figures))] if figures else []
    return config


def table(tid, systems, ensembles=None, rows=None):
    return {
        "id": tid,
        "title": tid,
        "paper": "p",
        "task": "en-de",
        "testset": "test",
        "columns": ["bleu_tok"],
        "systems": {s: {"model": {"attention": "global"}} for s in systems},
        "ensembles": ensembles or {},
        "rows": rows or [{"label": s, "system": s, "paper": {}} for s in systems],
    }


def test_ensemble_members_may_come_from_another_table_of_the_task(tmp_path):
    ens = {"ens": {"members": ["a", "b"]}}
    config = with_tables(tmp_path, {"t1": table("t1", ["a"], ens), "t2": table("t2", ["b"])})
    assert plan.collect_ensembles(config)["en-de"]["ens"]["members"] == ["a", "b"]
    config = with_tables(tmp_path, {"t1": table("t1", ["a"], ens)})
    with pytest.raises(cfg.ConfigError, match=r"t1.yaml: ensembles.ens: member\(s\) 'b' are not trained by any table"):
        plan.collect_ensembles(config)
    other = {"ens": {"members": ["a", "b"], "combine": "logprob"}}
    config = with_tables(tmp_path, {"t1": table("t1", ["a"], ens), "t2": table("t2", ["b"], other)})
    with pytest.raises(cfg.ConfigError, match=r"t2.yaml: ensemble 'ens' is also defined differently in .*t1.yaml"):
        plan.collect_ensembles(config)


def test_figures_must_use_systems_the_tables_train(tmp_path):
    figures = {
        "id": "f",
        "paper": "p",
        "task": "en-de",
        "figures": [
            {
                "id": "len",
                "kind": "bleu_by_length",
                "title": "t",
                "testset": "test",
                "lines": [{"system": "a", "label": "A"}, {"system": "ghost", "label": "G"}],
            }
        ],
    }
    config = with_tables(tmp_path, {"t1": table("t1", ["a"])}, figures)
    with pytest.raises(cfg.ConfigError, match=r"figs.yaml: figure len: 'ghost' not trained or ensembled"):
        plan.collect_figures(config)
    # an aligner may be drawn only where an alignment table of the task aligns the figure's split with it
    figures["figures"][0] = {
        "id": "maps",
        "kind": "attention_maps",
        "title": "t",
        "split": "align",
        "length": [1, 50],
        "maps": [{"system": "a", "label": "A"}, {"system": "eflomal_full", "label": "E"}],
    }
    config = with_tables(tmp_path, {"t1": table("t1", ["a"])}, figures)
    with pytest.raises(
        cfg.ConfigError,
        match=r"figure maps: 'eflomal_full' not trained or ensembled .* \(nor an "
        r"aligner of an alignment table on its split\)",
    ):
        plan.collect_figures(config)
    figures["figures"][0] = {"id": "lc", "kind": "learning_curves", "title": "t", "table": "t9"}
    config = with_tables(tmp_path, {"t1": table("t1", ["a"])}, figures)
    with pytest.raises(cfg.ConfigError, match=r"figure lc: table 't9' is not one of the preset's tables"):
        plan.collect_figures(config)


def test_decoding_models_resolve_systems_and_ensembles(tmp_path):
    paths, combine = plan.decoding_models(demo(), ROOT, "en-de", "ensemble_attention", tmp_path)
    assert combine == "prob" and len(paths) == 8 and paths[0] == tmp_path / "global_location" / "model.pt"
    assert plan.decoding_models(demo(), ROOT, "de-en", "base_reverse", tmp_path) == (
        [tmp_path / "base_reverse" / "model.pt"],
        None,
    )
    with pytest.raises(cfg.ConfigError, match="no table trains or ensembles a system 'ghost' for task en-de"):
        plan.decoding_models(demo(), ROOT, "en-de", "ghost", tmp_path)


# ------------------------------------------------------------------------------------------ report sections
def test_samples_are_taken_at_even_intervals_among_eligible_sentences():
    sources = [" ".join(["w"] * n) for n in (3, 10, 11, 40, 12, 13, 14, 2)]
    assert pick_samples(sources, 3, [10, 20]) == [1, 4, 6]
    assert pick_samples(sources, 1, [10, 20]) == [4]
    assert pick_samples(sources, 9, [10, 20]) == [1, 2, 4, 5, 6]


@pytest.fixture
def run_files(tmp_path):
    """A results/ and data/ tree for one pair, with the files the figure sections read."""
    results, data = tmp_path / "results", tmp_path / "data"
    srcs = ["a b c", "a b c d e f g h i j k", "x y z w v u t s r q p o", "m n"]
    refs = ["A B C D E", "A B C D E F G H I J K", "X Y Z W V U T S R Q P O", "M N O P Q"]
    write_lines_atomic(data / "en-de/prepared/test.src", srcs)
    write_lines_atomic(data / "en-de/prepared/test.tgt", refs)
    hyps = {"base": ["A B", "A B C D E F", "X Y", "M"], "best": refs}  # best: exact, BLEU 100 per bucket
    for system, lines in hyps.items():
        write_lines_atomic(results / f"en-de/translations/{system}.test.txt", lines)
        write_lines_atomic(results / f"en-de/translations/{system}.test.unk.txt", lines)
        write_json_atomic(
            results / f"en-de/scores/{system}.test.json",
            {
                "bleu_tok": 1.0,
                "bleu_tok_unk": 2.0,
                "by_length": {"plain": bleu_by_length(lines, refs, srcs), "unk": bleu_by_length(lines, refs, srcs)},
            },
        )
    for system in ("global", "local"):
        write_json_atomic(
            results / f"en-de/attention/{system}.align.json",
            {"line": 2, "src": ["a", "b", "c"], "tgt": ["A", "C"], "weights": [[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]},
        )
    (data / "en-de/raw").mkdir(parents=True)
    (data / "en-de/raw/align.gold").write_text("0-0\n0-0 2-1 1?1\n")
    seen = {}
    inputs = FigureInputs(results, data, "en-de", lambda path, kind: seen.setdefault(str(path), kind))
    return inputs, seen, tmp_path / "report"


def test_bleu_by_length_section_reads_the_scores_files(run_files):
    inputs, seen, out = run_files
    out.mkdir()
    fig = {
        "id": "fig6",
        "kind": "bleu_by_length",
        "title": "t",
        "testset": "test",
        "paper": "",
        "paper_note": None,
        "lines": [{"system": "base", "label": "base", "unk": False}, {"system": "best", "label": "best", "unk": True}],
    }
    view = figure_view(fig, inputs, out, {})
    assert (out / "fig6.png").read_bytes().startswith(b"\x89PNG")
    assert view["table"]["columns"] == ["source length", "base (BLEU 1.00)", "best (BLEU 2.00)"]
    first = view["table"]["rows"][0]  # 1-10 words: sentences 1 and 4
    assert first["name"] == "0-10" and first["cells"][1] == "100.00 (2)"
    assert any(p.endswith("best.test.json") for p in seen)


def test_attention_maps_section_adds_the_gold_alignment_of_the_same_sentence(run_files, monkeypatch):
    inputs, seen, out = run_files
    drawn = {}
    monkeypatch.setattr(
        "nmt.report.figures.attention_heatmaps", lambda panels, path, title: drawn.update(panels=panels, title=title)
    )
    fig = {
        "id": "fig7",
        "kind": "attention_maps",
        "title": "t",
        "split": "align",
        "length": [1, 5],
        "gold": True,
        "paper": "",
        "paper_note": None,
        "maps": [{"system": "global", "label": "G", "unk": False}, {"system": "local", "label": "L", "unk": False}],
    }
    view = figure_view(fig, inputs, out, {})
    assert [p[0] for p in drawn["panels"]] == ["G", "L", "gold alignment"]
    gold = drawn["panels"][2][3]  # line 2 of align.gold: sure 0-0 and 2-1, possible 1?1
    assert gold.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.5, 1.0]]
    assert "sentence 2 of the align split" in view["caption"] and view["figure"] == "fig7.png"


def test_samples_section_shows_source_reference_and_each_system(run_files):
    inputs, _, out = run_files
    fig = {
        "id": "tab5",
        "kind": "samples",
        "title": "t",
        "testset": "test",
        "count": 2,
        "length": [3, 20],
        "paper": "",
        "paper_note": None,
        "columns": [
            {"system": "best", "label": "best", "unk": True},
            {"system": "base", "label": "base", "unk": False},
        ],
    }
    view = figure_view(fig, inputs, out, {})
    assert [s["line"] for s in view["samples"]] == [1, 3]
    assert view["samples"][1]["rows"] == [
        ("src", "x y z w v u t s r q p o"),
        ("ref", "X Y Z W V U T S R Q P O"),
        ("best", "X Y Z W V U T S R Q P O"),
        ("base", "X Y"),
    ]


def test_unavailable_figure_says_why_and_draws_nothing(tmp_path):
    fig = {
        "id": "fig7",
        "kind": "attention_maps",
        "title": "t",
        "paper": "",
        "paper_note": None,
        "unavailable": "the en-de corpus has no 'align' split",
    }
    (tmp_path / "fig7.png").write_bytes(b"stale")
    view = figure_view(fig, None, tmp_path, {})
    assert view["unavailable"] and not (tmp_path / "fig7.png").exists()


def test_a_figure_whose_results_are_not_all_there_is_not_drawn_and_names_the_file(run_files):
    """A report made by hand from part of the results (e.g. two tables of a preset) draws what it can."""
    inputs, _, out = run_files
    out.mkdir()
    (out / "fig6.png").write_bytes(b"stale")
    fig = {
        "id": "fig6",
        "kind": "bleu_by_length",
        "title": "t",
        "testset": "test",
        "paper": "",
        "paper_note": None,
        "lines": [
            {"system": "base", "label": "base", "unk": False},
            {"system": "untrained", "label": "u", "unk": False},
        ],
    }
    view = figure_view(fig, inputs, out, {})
    assert view["unavailable"].startswith("MISSING results: no ")
    assert view["unavailable"].endswith("en-de/scores/untrained.test.json")
    assert not (out / "fig6.png").exists() and view["missing"].name == "untrained.test.json"


def test_a_figure_its_scores_cannot_give_is_not_drawn_and_says_why(run_files):
    """A scores file without unk-replaced BLEU by length (a translation with nothing replaced, scored before
    replacement applied to it): the section says so, the report is still made."""
    inputs, _, out = run_files
    out.mkdir()
    (out / "fig6.png").write_bytes(b"stale")
    scores = inputs.result(layout.SCORES, system="best", testset="test")
    record = json.loads(scores.read_text())
    record["by_length"]["unk"] = None
    scores.write_text(json.dumps(record))
    fig = {
        "id": "fig6",
        "kind": "bleu_by_length",
        "title": "t",
        "testset": "test",
        "paper": "",
        "paper_note": None,
        "lines": [{"system": "best", "label": "best", "unk": True}],
    }
    view = figure_view(fig, inputs, out, {})
    assert view["unavailable"].endswith(
        "best.test.json: no unk-replaced BLEU by length (evaluated without --src, "
        "or a model without attention asked for 'unk: true')"
    )
    assert not (out / "fig6.png").exists()
