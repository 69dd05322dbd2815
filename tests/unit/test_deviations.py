"""The report's list of deviations from the papers, generated from the configs and the table files."""

from pathlib import Path

from nmt import config as cfg
from nmt.report.deviations import deviations

ROOT = Path(__file__).resolve().parents[2]


def found(preset: str) -> dict:
    config = cfg.load_params(ROOT / "params.yaml", preset)
    return deviations(config, cfg.load_params(ROOT / "params.yaml", "paper"), config["tables"], ROOT)


def test_the_demo_differs_from_the_paper_preset_by_its_corpora_optimiser_and_sizes():
    demo = found("demo")
    assert "task en-de: synth in place of wmt14_en_de_stanford" in demo["corpora"]
    optimiser = next(d for d in demo["settings"] if d["key"] == "train.optimizer" and d["paper"] == "sgd")
    assert optimiser["ours"] == "adam" and "en-de/global_location_feed" in optimiser["systems"]
    assert "en-de/rnnsearch" not in optimiser["systems"]  # Peter et al.'s recipe is AdaDelta in both
    hidden = next(d for d in demo["settings"] if d["key"] == "model.hidden" and d["paper"] == "1000")
    assert hidden["ours"] == "48"
    assert any(d["key"] == "prepare.src_vocab" and d["ours"] == "190" for d in demo["settings"])
    assert "task de-en-europarl: synth in place of europarl_v7_de_en" in demo["corpora"]  # Peter's, via same_as
    assert {"key": "unk.dictionary", "ours": "eflomal", "paper": "stanford", "systems": ["every system"]} in demo[
        "settings"
    ]


def test_the_paper_preset_lists_only_what_it_declares_itself():
    paper = found("paper")
    assert paper["corpora"] == [] and paper["settings"] == []
    declared = paper["declared"]
    assert any(line.startswith("raffel2017_table4: The monotonic energy's bias r starts at -1") for line in declared)
    assert any(line.startswith("luong2015_table1: The ensemble") for line in declared)
    assert any("SAER of hard links" in line for line in declared)
