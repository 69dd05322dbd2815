"""The real-data path on a slice of ../shared/data: the small preset's corpus, offline from the mirror,
through get -> prepare -> train -> translate -> evaluate at toy size."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import required

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"

pytestmark = required.skip_unless((SHARED / "multi30k").is_dir(), "../shared/data/multi30k is absent")


def nmt(*args, cwd):
    result = subprocess.run([sys.executable, "-m", "nmt.cli", *args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params.update(presets_dir="presets", tables=[str(ROOT / t) for t in params["tables"]])
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    preset = yaml.safe_load((ROOT / "workflow/presets/small.yaml").read_text())
    preset["data"]["mirror"] = str(SHARED)
    preset["data"]["tasks"]["en-de"]["max_train"] = 400  # a slice keeps this a unit-test-sized run
    preset["prepare"].update(src_vocab=300, tgt_vocab=300)
    preset["model"].update(layers=1, hidden=16, embed=16)
    preset["train"].update(
        epochs=1, halve_after=1, dropout_schedule={"epochs": 1, "halve_after": 1}, plateau=None, seeds=None
    )
    (root / "presets").mkdir()
    (root / "presets" / "slice.yaml").write_text(yaml.safe_dump(preset))
    return root


def test_small_preset_is_valid():
    from nmt import config as cfg

    config = cfg.load_params(ROOT / "params.yaml", "small")
    assert cfg.corpus_for_task(config, "en-de")["corpus"] == "multi30k"


def test_real_corpus_slice_runs_offline_from_the_mirror(workdir):
    common = ["--params", "params.yaml", "--preset", "slice"]
    got = nmt("data", "get", *common, "--task", "en-de", "--out", "raw", "--offline", cwd=workdir)
    counts = json.loads(got.stdout)
    assert counts["train"]["sentences"] == 400
    assert counts["dev"]["sentences"] == 1014 and counts["test"]["sentences"] == 1000
    raw_first = (SHARED / "multi30k/raw/train.en").read_text().splitlines()[0]
    assert (workdir / "raw/train.src").read_text().splitlines()[0] == raw_first

    nmt("data", "prepare", *common, "--task", "en-de", "--raw", "raw", "--out", "prep", cwd=workdir)
    prep = json.loads((workdir / "prep/prep.json").read_text())
    assert prep["tokenize"] == "sacremoses" and prep["lowercase"] is True
    first = (workdir / "prep/train.src").read_text().splitlines()[0]
    assert first == first.lower() and " ." in first  # Moses split the final full stop

    table = str(ROOT / "workflow/tables/luong2015_table1.yaml")
    nmt(
        "train",
        *common,
        "--table",
        table,
        "--system",
        "global_location",
        "--data",
        "prep",
        "--out",
        "model",
        "--threads",
        "1",
        cwd=workdir,
    )
    (workdir / "few.src").write_text("".join((workdir / "prep/test.src").read_text().splitlines(True)[:20]))
    (workdir / "few.tgt").write_text("".join((workdir / "prep/test.tgt").read_text().splitlines(True)[:20]))
    nmt("translate", "--model", "model/model.pt", "--src", "few.src", "--out", "few.hyp", "--beam", "2", cwd=workdir)
    nmt(
        "evaluate",
        "--hyp",
        "few.hyp",
        "--ref",
        "few.tgt",
        "--src",
        "few.src",
        "--model",
        "model/model.pt",
        "--out",
        "scores.json",
        "--system",
        "global_location",
        "--testset",
        "test",
        "--preset-name",
        "slice",
        "--pair",
        "en-de",
        cwd=workdir,
    )
    scores = json.loads((workdir / "scores.json").read_text())
    assert scores["n_sentences"] == 20 and scores["ppl"] > 1
    assert "tok:13a" in scores["bleu_detok_signature"]


@required.skip_unless(
    (SHARED / "opennmt_sample").is_dir() and (SHARED / "wmt_newstest_ende_tok").is_dir(),
    "the WMT sample or the newstests are absent from ../shared/data",
)
def test_news_task_mixes_corpora_drops_the_empty_pair_and_keeps_the_tokenisation(workdir):
    common = ["--params", "params.yaml", "--preset", "slice"]
    got = json.loads(
        nmt("data", "get", *common, "--task", "en-de-news", "--out", "news", "--offline", cwd=workdir).stdout
    )
    # src-train.txt line 5 is empty in the pinned release: dropped, counted, the rest stays aligned.
    assert got["train"]["sentences"] == 9999 and got["train"]["dropped_empty_pairs"] == 1
    assert got["train"]["dropped_empty_first_lines"] == [5]
    assert got["dev"]["sentences"] == 3000 and got["test"]["sentences"] == 2737
    assert got["test"]["corpus"] == "wmt_newstest_ende_tok"
    tgt_raw = (SHARED / "opennmt_sample/tgt-train.txt").read_text(encoding="utf-8").split("\n")
    assert (workdir / "news/train.tgt").read_text(encoding="utf-8").split("\n")[4] == tgt_raw[5]

    nmt("data", "prepare", *common, "--task", "en-de-news", "--raw", "news", "--out", "news-prep", cwd=workdir)
    prep = json.loads((workdir / "news-prep/prep.json").read_text())
    assert prep["tokenize"] == "none" and prep["lowercase"] is False  # the task's prepare overrides
    test_src = (workdir / "news-prep/test.src").read_text(encoding="utf-8")
    assert test_src == (SHARED / "wmt_newstest_ende_tok/newstest2014.filtered.tok.en").read_text(encoding="utf-8")


@required.skip_unless((SHARED / "opennmt_sample").is_dir(), "../shared/data/opennmt_sample is absent")
def test_an_empty_training_line_is_an_error_unless_the_preset_drops_them(tmp_path):
    from nmt.data.corpus import get_task_corpus
    from nmt.data.text import CorpusError

    config = {
        "preset": "t",
        "data": {
            "mirror": str(SHARED),
            "tasks": {
                "news": {
                    "corpus": "wmt_opennmt_sample",
                    "src_lang": "en",
                    "tgt_lang": "de",
                    "splits": {s: {"src": "src-val.txt", "tgt": "tgt-val.txt"} for s in ("dev", "test")}
                    | {"train": {"src": "src-train.txt", "tgt": "tgt-train.txt"}},
                }
            },
        },
    }
    with pytest.raises(CorpusError, match=r"src-train\.txt:5: empty line"):
        get_task_corpus(config, "news", tmp_path / "out", downloads=tmp_path / "dl", allow_network=False)
    assert not (tmp_path / "out" / "stats.json").exists()
