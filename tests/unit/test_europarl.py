"""Peter et al.'s data as the paper preset prepares it: Europarl v7 De-En from its archive, cleaned (empty and
misaligned pairs dropped, the RWTH test sentences excluded, each counted), IWSLT 2013 dev/test from WIT3's XML,
the gold-aligned split kept as it is tokenised; and the `same_as` tasks of the presets without Europarl."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

import nmt.data.corpus_registry as registry_module
from nmt import config as cfg
from nmt.base.errors import ConfigError
from nmt.config import plan
from nmt.data.clean import clean_training_pairs
from nmt.data.corpus import get_task_corpus
from nmt.data.prepare import prepare
from nmt.data.tasks import data_task

ROOT = Path(__file__).resolve().parents[2]

# line: German / English; what the cleaning must do with it
EUROPARL = [
    (
        "Wir glauben nicht, daß wir nur Rosinen herauspicken sollten.",
        "We do not believe that we should cherry-pick.",
        "excluded",
    ),  # an RWTH test pair, untokenised
    ("", "Resumption of the session", "empty"),
    ("Guten Morgen, Frau Präsidentin.", "Good morning, Madam President.", "kept"),
    (
        "Ja.",
        "Yes, and this is a very long sentence that the aligner paired with a one-word answer by mistake.",
        "ratio",
    ),
    ("Das Haus ist klein.", "The house is small.", "kept"),
    ("Das stimmt nicht!", "That is simply not true, you know.", "excluded"),  # its German side is a test sentence
    ("Wir stimmen morgen ab.", "We vote tomorrow.", "kept"),
]
RWTH_DE = ["Wir glauben nicht , daß wir nur Rosinen herauspicken sollten .", "Das stimmt nicht !"]
RWTH_EN = ["We do not believe that we should cherry-pick .", "But this is not what happens ."]
RWTH_TALP = ["1-1 2-2 3-3 4-3", "1-1 2-4 3-3 3p5 4-6"]  # 1-based, German first
DEV = [("Danke.", "Thank you."), ("Das ist gut &amp; schön.", "That is good &amp; nice.")]
TEST = [("Hallo Welt.", "Hello world.")]


def _archive(path: Path, members: dict[str, str]) -> str:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode("latin-1" if name.startswith("DeEn/") else "utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path.as_uri()


def _wit3_xml(lines: list[str]) -> str:
    segs = "\n".join(f'<seg id="{i}"> {line} </seg>' for i, line in enumerate(lines, start=1))
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<srcset setid="x">\n<doc docid="1">\n{segs}\n'
        f"</doc>\n</srcset>\n</mteval>\n"
    )


@pytest.fixture
def europarl(tmp_path, monkeypatch):
    """The packaged registry with Europarl, IWSLT 2013 and RWTH pointed at hand-made archives of the same layout
    (their sums unknown: recorded by the first fetch into a checksum file of the test's own)."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    europarl_url = _archive(
        upstream / "de-en.tgz",
        {
            "europarl-v7.de-en.de": "".join(de + "\n" for de, _, _ in EUROPARL),
            "europarl-v7.de-en.en": "".join(en + "\n" for _, en, _ in EUROPARL),
        },
    )
    iwslt_url = _archive(
        upstream / "iwslt.tgz",
        {
            f"de-en/IWSLT13.TED.{name}.de-en.{lang}.xml": _wit3_xml([pair[side] for pair in pairs])
            for name, pairs in (("dev2010", DEV), ("tst2010", TEST))
            for side, lang in ((0, "de"), (1, "en"))
        },
    )
    rwth_url = _archive(
        upstream / "rwth.tar.gz",
        {
            "DeEn/de": "\n".join(RWTH_DE) + "\n\n",
            "DeEn/en": "\n".join(RWTH_EN) + "\n\n",
            "DeEn/alignmentDeEn.talp": "\n".join(RWTH_TALP) + "\n",
            "DeEn/alignmentDeEn": "x\n",
        },
    )
    registry = yaml.safe_load(registry_module.DEFAULT_REGISTRY.read_text(encoding="utf-8"))
    for corpus, url in (
        ("europarl_v7_de_en", europarl_url),
        ("iwslt13_de_en", iwslt_url),
        ("rwth_de_en_gold", rwth_url),
    ):
        for entry in registry[corpus]["files"].values():
            entry.update(url=url, sha256=None)
    path = tmp_path / "corpora.yaml"
    path.write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(registry_module, "DEFAULT_REGISTRY", path)
    monkeypatch.setenv("NMT_CHECKSUMS", str(tmp_path / "checksums.tsv"))
    config = cfg.load_params(ROOT / "params.yaml", "paper")
    config["data"] = {**config["data"], "accept_rwth_licence": True}
    return config


def test_the_paper_presets_europarl_task_is_cleaned_counted_and_keeps_the_gold_split_tokenised(tmp_path, europarl):
    raw = tmp_path / "raw"
    summary = get_task_corpus(europarl, "de-en-europarl", raw, downloads=tmp_path / "downloads")
    kept = [(de, en) for de, en, fate in EUROPARL if fate == "kept"]
    assert (raw / "train.src").read_text(encoding="utf-8").splitlines() == [de for de, _ in kept]
    assert (raw / "train.tgt").read_text(encoding="utf-8").splitlines() == [en for _, en in kept]
    cleaning = summary["splits"]["train"]["cleaning"]
    lines = {
        fate: [i for i, (_, _, f) in enumerate(EUROPARL, start=1) if f == fate]
        for fate in ("empty", "ratio", "excluded")
    }
    for reason, numbers in lines.items():
        assert cleaning[reason] == {"pairs": len(numbers), "first_lines": numbers}
    assert (cleaning["read"], cleaning["kept"]) == (len(EUROPARL), len(kept))
    assert json.loads((raw / "stats.json").read_text())["splits"]["train"]["cleaning"] == cleaning
    # WIT3's XML: the <seg> texts, one per line, entities decoded
    assert (raw / "dev.src").read_text(encoding="utf-8").splitlines() == ["Danke.", "Das ist gut & schön."]
    assert (raw / "test.tgt").read_text(encoding="utf-8").splitlines() == ["Hello world."]
    assert (raw / "align.src").read_text(encoding="utf-8").splitlines() == RWTH_DE  # latin-1 in, UTF-8 out
    assert (raw / "align.gold").is_file()

    prep = cfg.prepare_for_task(europarl, "de-en-europarl")
    assert (prep["src_vocab"], prep["tgt_vocab"], prep["tokenize"]) == (30000, 30000, True)
    out = tmp_path / "prepared"
    stats = prepare(
        raw,
        out,
        splits=cfg.task_splits(europarl, "de-en-europarl"),
        src_lang="de",
        tgt_lang="en",
        max_len=prep["max_len"],
        src_vocab=prep["src_vocab"],
        tgt_vocab=prep["tgt_vocab"],
        tokenize=True,
        tokenized_splits=tuple(cfg.tokenized_splits(europarl, "de-en-europarl")),
    )
    assert stats["kept_as_tokenized"] == ["align"]
    # the training text is tokenised by sacremoses; the gold split stays word for word what its links count
    assert (out / "train.src").read_text(encoding="utf-8").splitlines()[0] == "Guten Morgen , Frau Präsidentin ."
    assert (out / "align.src").read_text(encoding="utf-8").splitlines() == RWTH_DE


def test_without_the_rwth_licence_nothing_is_excluded_and_the_split_is_absent(tmp_path, europarl):
    europarl["data"]["accept_rwth_licence"] = False
    summary = get_task_corpus(europarl, "de-en-europarl", tmp_path / "raw", downloads=tmp_path / "downloads")
    assert "align" not in summary["splits"]
    assert summary["splits"]["train"]["cleaning"]["excluded"]["pairs"] == 0
    # the guided-BLEU follow-up still runs on Europarl and IWSLT: its systems need no gold alignments
    assert "workflow/tables/peter2017_guided_bleu.yaml" not in plan.unavailable_tables(europarl, ROOT)
    assert ("de-en-europarl", "rnnsearch_guided_by_tf", "test") in plan.collect_evaluations(europarl, ROOT)


def test_cleaning_compares_letters_and_digits_and_counts_each_pair_once():
    src = ["A b.", "", "x", "Das stimmt nicht!"]
    tgt = ["C d.", "", "y " * 20, "z"]
    kept_src, kept_tgt, report = clean_training_pairs(src, tgt, max_ratio=9, exclude=["das stimmt nicht !"])
    assert (kept_src, kept_tgt) == (["A b."], ["C d."])
    assert {r: report[r]["pairs"] for r in ("empty", "ratio", "excluded")} == {"empty": 1, "ratio": 1, "excluded": 1}


def test_a_task_played_by_another_is_trained_and_stored_once_under_it():
    demo = cfg.load_params(ROOT / "params.yaml", "demo")
    assert data_task(demo, "de-en-europarl") == "de-en" and data_task(demo, "de-en") == "de-en"
    assert cfg.corpus_for_task(demo, "en-de-europarl") is demo["data"]["tasks"]["en-de"]
    systems = plan.collect_systems(demo, ROOT)
    assert "de-en-europarl" not in systems and "rnnsearch_tf_guided" in systems["de-en"]
    circular = {
        **demo,
        "data": {**demo["data"], "tasks": {**demo["data"]["tasks"], "de-en": {"same_as": "de-en-europarl"}}},
    }
    with pytest.raises(ConfigError, match="same_as goes round in a circle"):
        data_task(circular, "de-en")


def test_a_task_entry_is_a_corpus_or_same_as_alone(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text((ROOT / "params.yaml").read_text())
    presets = tmp_path / "workflow" / "presets"
    presets.mkdir(parents=True)
    tiny = yaml.safe_load((ROOT / "workflow/presets/tiny.yaml").read_text())
    tiny["data"]["tasks"]["de-en-europarl"] = {"same_as": "de-en", "corpus": "synth"}
    (presets / "tiny.yaml").write_text(yaml.safe_dump(tiny))
    with pytest.raises(ConfigError, match="de-en-europarl"):
        cfg.load_params(params, "tiny")


def test_nmt_config_shows_peters_systems_as_the_paper_preset_trains_them(capsys, monkeypatch):
    from nmt.cli import main

    monkeypatch.chdir(ROOT)
    for table in ("peter2017_table1", "peter2017_guided_bleu"):
        main(["config", "--preset", "paper", "--table", f"workflow/tables/{table}.yaml", "--system", "rnnsearch"])
        shown = json.loads(capsys.readouterr().out)
        assert shown["task"] == {"name": "de-en-europarl", "played_by": "de-en-europarl", "corpus": "europarl_v7_de_en"}
        assert (shown["prepare"]["src_vocab"], shown["prepare"]["tgt_vocab"]) == (30000, 30000)
        assert shown["translate"]["beam"] == 12
        assert {k: shown["train"][k] for k in ("optimizer", "batch_size", "max_updates", "eval_every", "keep")} == {
            "optimizer": "adadelta",
            "batch_size": 40,
            "max_updates": 250000,
            "eval_every": 10000,
            "keep": "best",
        }
