"""Alignment tables (Luong Table 6, Peter Table 1) in the configuration: what they align and train, recipes,
training inputs, and tables a preset cannot measure."""

from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.config import plan
from nmt.config.table_files import load_table
from nmt.report.tables import build_table

import required

ROOT = Path(__file__).resolve().parents[2]


def demo():
    return cfg.load_params(ROOT / "params.yaml", "demo")


def test_luong_table6_aligns_trained_systems_the_ensemble_and_eflomal():
    entries = {(e["task"], e["name"]): e for e in plan.collect_alignments(demo(), ROOT)}
    for name in ("global_location_feed", "local_m_general_feed", "local_p_general_feed", "ensemble_attention"):
        assert entries[("en-de", name)]["kind"] == "model" and entries[("en-de", name)]["reverse_task"] is None
    assert entries[("en-de", "eflomal_full")] == {
        "task": "en-de",
        "name": "eflomal_full",
        "split": "align",
        "kind": "aligner",
        "aligner": {"tool": "eflomal", "model": 3, "symmetrize": "grow-diag-final-and"},
        "seed": 1,
    }


@pytest.mark.parametrize(
    "table, section, name",
    [("luong2015_table6", "aligners", "eflomal_full"), ("luong2015_table1", "ensembles", "ensemble_attention")],
)
def test_an_aligner_or_ensemble_may_not_be_named_like_a_seed_run(tmp_path, table, section, name):
    """Aligners and ensembles have seed runs NAME_seedN too (plan.aligner_runs, plan.collect_ensembles)."""
    spec = yaml.safe_load((ROOT / f"workflow/tables/{table}.yaml").read_text())
    where = spec["alignment"] if section == "aligners" else spec
    where[section]["x_seed2"] = where[section].pop(name)
    for row in spec["rows"]:
        row["system"] = "x_seed2" if row["system"] == name else row["system"]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(spec))
    key = "alignment.aligners" if section == "aligners" else "ensembles"
    with pytest.raises(ValueError, match=rf"t\.yaml: {key}\.x_seed2: a name ending in _seedN is a seed run's"):
        load_table(tmp_path / "t.yaml")


def test_peter_table1_trains_every_system_in_both_directions_and_merges_them():
    config = demo()
    systems = plan.collect_systems(config, ROOT)
    peter = ("rnnsearch", "rnnsearch_guided", "rnnsearch_tf_frozen", "rnnsearch_tf_guided")
    for task in ("de-en", "en-de"):
        assert set(peter) <= set(systems[task])
    entry = next(e for e in plan.collect_alignments(config, ROOT) if e["name"] == "rnnsearch_tf_guided")
    assert (entry["task"], entry["reverse_task"], entry["symmetrize"]) == ("de-en", "en-de", "refined")
    # the recipe makes them RNNsearch models at the preset's size, under each system's own overrides
    table = load_table(ROOT / "workflow/tables/peter2017_table1.yaml")
    resolved = cfg.system_config(config, table, "rnnsearch_tf_frozen", "peter")
    assert resolved["model"]["arch"] == "rnnsearch" and resolved["model"]["hidden"] == config["model"]["hidden"]
    assert resolved["model"]["target_foresight"] and resolved["train"]["trainable"] == "attention"
    assert resolved["train"]["optimizer"] == "adam"  # the demo's deviation; params.yaml's recipe says adadelta
    paper = cfg.system_config(cfg.load_params(ROOT / "params.yaml", "paper"), table, "rnnsearch", "peter")
    assert (paper["train"]["optimizer"], paper["model"]["embed"], paper["train"]["batch_size"]) == ("adadelta", 620, 40)


def test_training_inputs_name_the_baseline_model_and_the_aligned_training_pairs():
    config = demo()
    table = load_table(ROOT / "workflow/tables/peter2017_table1.yaml")
    frozen = cfg.system_config(config, table, "rnnsearch_tf_frozen", "peter")
    assert cfg.training_inputs(frozen, "R") == {"init_from": Path("R/models/rnnsearch/model.pt")}
    guided = cfg.system_config(config, table, "rnnsearch_tf_guided", "peter")
    assert cfg.training_inputs(guided, "R") == {"links": Path("R/alignments/aligners/eflomal_full.train.links")}
    assert cfg.training_inputs(cfg.system_config(config, table, "rnnsearch", "peter"), "R") == {}
    assert plan.collect_training_alignments(config, ROOT) == {
        (task, "eflomal_full"): {"tool": "eflomal", "model": 3, "symmetrize": "grow-diag-final-and"}
        for task in ("de-en", "en-de")
    }


def test_guided_alignment_from_an_unknown_aligner_is_an_error(tmp_path):
    table = yaml.safe_load((ROOT / "workflow/tables/peter2017_table1.yaml").read_text())
    table["systems"]["rnnsearch_guided"]["train"]["guided_alignment"]["from"] = "giza"
    path = tmp_path / "peter.yaml"
    path.write_text(yaml.safe_dump(table))
    config = {**demo(), "tables": [str(path)]}
    with pytest.raises(cfg.ConfigError, match="from 'giza' is not an aligner of any de-en table of preset 'demo'"):
        plan.collect_training_alignments(config, ROOT)


def test_an_unknown_recipe_names_the_table(tmp_path):
    table = yaml.safe_load((ROOT / "workflow/tables/peter2017_table1.yaml").read_text())
    table["recipe"] = "transformer"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(table))
    with pytest.raises(cfg.ConfigError, match=r"t.yaml: recipe 'transformer' is not defined in preset 'demo'"):
        cfg.system_config(demo(), load_table(path), "rnnsearch", str(path))


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"uses": ["base"], "symmetrize": "refined"}, "needs alignment.reverse_task"),
        ({"aligners": {"x": {"tool": "giza"}}}, r"alignment\.aligners\.x\.tool: 'giza' is not one of \['eflomal'\]"),
        ({"aligners": {"x": {"model": 4}}}, r"alignment\.aligners\.x\.model: 4 is not one of \[1, 2, 3\]"),
        ({"reverse_task": "de-en", "symmetrize": "diagonal"}, r"alignment\.symmetrize: 'diagonal' is not one of"),
        ({"shared": 1}, r"alignment: Additional properties are not allowed \('shared' was unexpected\)"),
    ],
)
def test_alignment_section_errors_name_the_file(tmp_path, bad, message):
    table = yaml.safe_load((ROOT / "workflow/tables/luong2015_table6.yaml").read_text())
    table["alignment"] = bad
    path = tmp_path / "t6.yaml"
    path.write_text(yaml.safe_dump(table))
    with pytest.raises(ValueError, match=message) as err:
        load_table(path)
    assert str(path) in str(err.value)


def test_without_gold_alignments_the_tables_are_not_run_and_nothing_is_trained_for_them(tmp_path):
    small = cfg.load_params(ROOT / "params.yaml", "small")
    unavailable = plan.unavailable_tables(small, ROOT)
    assert set(unavailable) == {"workflow/tables/luong2015_table6.yaml", "workflow/tables/peter2017_table1.yaml"}
    assert "has no 'align' split" in unavailable["workflow/tables/luong2015_table6.yaml"]
    assert plan.collect_alignments(small, ROOT) == []
    # The guided-BLEU follow-up scores translations, not alignments: it runs, and of Table 1 only the systems it
    # needs are trained, in its own direction (Table 1 would train them both ways to merge the two)
    systems = plan.collect_systems(small, ROOT)
    assert not any(s.startswith("rnnsearch") for s in systems["en-de"])
    assert {"rnnsearch_tf_guided", "rnnsearch_guided_by_tf"} <= set(systems["de-en"])
    table = load_table(ROOT / "workflow/tables/luong2015_table6.yaml")
    df = build_table(table, tmp_path, "en-de", "small", unavailable["workflow/tables/luong2015_table6.yaml"])
    assert set(df["status"]) == {"not run"}
    assert df["note"].str.contains("requires gold alignments").all()


SHARED = ROOT.parent / "shared" / "data"


def test_the_rwth_split_exists_only_once_its_licence_is_accepted_or_a_copy_is_in_the_mirror(tmp_path, monkeypatch):
    paper = cfg.load_params(ROOT / "params.yaml", "paper")
    assert "align" not in cfg.task_splits(paper, "en-de")
    why = plan.unavailable_tables(paper, ROOT)["workflow/tables/luong2015_table6.yaml"]
    assert "rwth_de_en_gold licence" in why and "accept_rwth_licence: true" in why
    accepted = {**paper, "data": {**paper["data"], "accept_rwth_licence": True}}
    assert cfg.task_splits(accepted, "en-de")[-1] == "align"
    assert cfg.gold_splits(accepted, "de-en-europarl") == ["align"]
    monkeypatch.chdir(tmp_path)  # a mirror without the files does not count
    mirrored = {**paper, "data": {**paper["data"], "mirror": "mirror"}}
    assert "align" not in cfg.task_splits(mirrored, "de-en-europarl")


def test_the_rwth_split_is_written_as_utf8_text_and_pharaoh_links_in_the_tasks_orientation(tmp_path):
    if not (SHARED / "rwth_de_en_gold_alignment" / "alignmentDeEn.talp").is_file():
        required.unavailable("../shared/data/rwth_de_en_gold_alignment is absent")
    from nmt.data.alignments import read_pharaoh, read_talp
    from nmt.data.corpus import get_task_corpus

    gold_file = SHARED / "rwth_de_en_gold_alignment" / "alignmentDeEn.talp"
    rwth = {"corpus": "rwth_de_en_gold", "encoding": "latin-1", "gold": "alignmentDeEn.talp", "gold_format": "talp"}
    news = {"corpus": "wmt_newstest_ende_tok"}
    config = cfg.load_params(ROOT / "params.yaml", "demo")
    config["data"] = {
        "mirror": str(SHARED),
        "tasks": {
            "en-de": {
                "corpus": "wmt_newstest_ende_tok",
                "src_lang": "en",
                "tgt_lang": "de",
                "splits": {
                    "train": {**news, "src": "newstest2013.tok.en", "tgt": "newstest2013.tok.de"},
                    "dev": {**news, "src": "newstest2014.filtered.tok.en", "tgt": "newstest2014.filtered.tok.de"},
                    "test": {**news, "src": "newstest2014.filtered.tok.en", "tgt": "newstest2014.filtered.tok.de"},
                    "align": {**rwth, "src": "en", "tgt": "de", "gold_reverse": True},
                },
            }
        },
    }
    summary = get_task_corpus(
        config, "en-de", tmp_path / "raw", root=ROOT, downloads=tmp_path / "dl", allow_network=False
    )
    src = (tmp_path / "raw/align.src").read_text(encoding="utf-8").splitlines()
    tgt = (tmp_path / "raw/align.tgt").read_text(encoding="utf-8").splitlines()
    assert len(src) == len(tgt) == 508 and any("ß" in line for line in tgt)  # German, decoded from latin-1
    written = read_pharaoh(tmp_path / "raw/align.gold")
    original = read_talp(gold_file)  # German first, as the file is
    assert [a.sure for a in written] == [{(j, i) for i, j in a.sure} for a in original]  # English first now
    assert summary["splits"]["align"]["gold_links"] == {"sure": 9613, "possible": 10534}


def test_the_follow_up_is_guided_by_the_tf_systems_links_and_needs_table1():
    config = demo()
    table = load_table(ROOT / "workflow/tables/peter2017_guided_bleu.yaml")
    by_tf = cfg.system_config(config, table, "rnnsearch_guided_by_tf", "follow-up")
    assert cfg.training_inputs(by_tf, "R") == {"links": Path("R/alignments/rnnsearch_tf_guided.train.links")}
    assert plan.collect_training_model_alignments(config, ROOT) == {("de-en", "rnnsearch_tf_guided")}
    small = cfg.load_params(ROOT / "params.yaml", "small")
    # without gold alignments Table 1 is not run, but the follow-up is: it needs Table 1's systems, not its gold set
    assert "workflow/tables/peter2017_guided_bleu.yaml" not in plan.unavailable_tables(small, ROOT)
    # three seeds: each seed run of the follow-up is guided by the same seed's TF system
    assert plan.collect_training_model_alignments(small, ROOT) == {
        ("de-en", "rnnsearch_tf_guided"),
        ("de-en", "rnnsearch_tf_guided_seed2"),
        ("de-en", "rnnsearch_tf_guided_seed3"),
    }
    assert cfg.training_inputs(cfg.system_config(small, table, "rnnsearch_guided_by_tf_seed3", "follow-up"), "R") == {
        "links": Path("R/alignments/rnnsearch_tf_guided_seed3.train.links")
    }
    assert [e for e in plan.collect_evaluations(small, ROOT) if e[1].startswith("rnnsearch")] == [
        ("de-en", name + seed, "test")
        for name in ("rnnsearch", "rnnsearch_guided", "rnnsearch_guided_by_tf")
        for seed in ("", "_seed2", "_seed3")
    ]
