"""Bad input through the command line's entry (nmt.cli.main, in this process: the `nmt` command's parsing and error
handling without an interpreter's start per case): one line on stderr that names the file, line or key ("nmt:
error: ..."), exit status 2, no traceback, and no output file left behind. Every error a user can cause derives from
nmt.base.errors.UserError, which `nmt`'s main catches; each case here is one documented bad input (add yours)."""

from pathlib import Path

import pytest
import torch

from nmt.data.vocab import Vocab
from nmt.decode.unk import write_dictionary
from nmt.models.io import save_model

from command_line import assert_one_line
from factories import SRC_WORDS, TGT_WORDS, make_model, model_config


def model_file(path: Path, seed: int, tgt_words: list[str], **overrides) -> Path:
    config = model_config(without=("window",), hidden=8, **overrides)
    model = make_model(
        seed, config, src_vocab=len(Vocab(SRC_WORDS)), tgt_vocab=len(Vocab(tgt_words)), init=None, train=True
    )
    save_model(path, model, Vocab(SRC_WORDS), Vocab(tgt_words), {"model": config, "translate": {"beam": 2}})
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad")
    model_file(root / "a.pt", 1, TGT_WORDS)
    model_file(root / "other_vocab.pt", 2, TGT_WORDS[:-1] + ["other"])
    model_file(root / "no_attention.pt", 3, TGT_WORDS, attention="none", input_feed=False)
    (root / "src").write_text("s1 s2 s3\n")
    (root / "tgt").write_text("t1 t2\n")
    (root / "hyp").write_text("t1 <unk> t2\n")
    (root / "pos_outside").write_text("0 1 5\n")
    (root / "pos_short").write_text("0 1\n")
    (root / "pos_words").write_text("0 one 2\n")
    (root / "pos_two_lines").write_text("0 1 2\n0\n")
    write_dictionary(root / "dict.tsv", {"s2": ("t9", 3)})
    (root / "gold").write_text("0-0 1-1\n0-0\n")
    (root / "links_cr").write_bytes(b"0-0 1-1\r0-0\r")  # old Mac line endings: one "line" holding the whole file
    (root / "links_nul").write_bytes(b"0-0 1-1\n0-0\x00\n")
    for split in ("train", "dev", "test"):
        (root / "raw" / split).parent.mkdir(exist_ok=True)
        (root / "raw" / f"{split}.src").write_text("" if split == "train" else "s1 s2\n")
        (root / "raw" / f"{split}.tgt").write_text("" if split == "train" else "t1 t2\n")
    (root / "long" / "train.src").parent.mkdir()
    for split in ("train", "dev", "test"):
        (root / "long" / f"{split}.src").write_text(" ".join(["s1"] * 60) + "\n")
        (root / "long" / f"{split}.tgt").write_text("t1 t2\n")
    (root / "scores.json").write_text('{"bleu_tok": 12.5,\n "ppl": }\n')
    blob = torch.load(root / "a.pt", weights_only=True)
    for name, change in (
        ("unknown_attention", {"attention": "bogus"}),
        ("no_hidden", {"hidden": None}),
        ("text_hidden", {"hidden": "big"}),
    ):
        config = {k: v for k, v in {**blob["model_config"], **change}.items() if v is not None}
        torch.save({**blob, "model_config": config}, root / f"{name}.pt")
    torch.save([blob], root / "list_payload.pt")  # a model file whose payload is not a dict
    torch.save({**blob, "tgt_vocab": " ".join(blob["tgt_vocab"])}, root / "text_vocab.pt")
    torch.save({**blob, "src_vocab": blob["src_vocab"][:-1] + [7]}, root / "number_vocab.pt")
    (root / "badprep").mkdir()
    for side in ("src", "tgt"):
        Vocab(SRC_WORDS).save(root / "badprep" / f"vocab.{side}")
    (root / "badprep" / "train.pt").write_bytes((root / "a.pt").read_bytes()[:200])  # truncated
    (root / "badprep" / "dev.pt").write_bytes(b"not a split")
    table = (ROOT / "workflow/tables/luong2015_table1.yaml").read_text(encoding="utf-8")
    (root / "paper_key.yaml").write_text(table.replace("paper: {ppl: 10.6,", "paper: {perplexity: 10.6,", 1))
    (root / "bogus_score.yaml").write_text(table.replace("score: location", "score: bogus", 1))
    (root / "ref2").write_text("a b .\nc d .\n")
    (root / "raw2").write_text("C d.\nA b.\n")  # the raw reference, in another order
    return root


ROOT = Path(__file__).resolve().parents[2]
SCORE = ["align", "score", "--gold", "{d}/gold", "--out", "{d}/out"]
PREPARE = [
    "data",
    "prepare",
    "--params",
    str(ROOT / "params.yaml"),
    "--task",
    "en-de",
    "--out",
    "{d}/out",
    "--splits",
    "train",
    "dev",
    "test",
]
TRAIN = ["train", "--params", str(ROOT / "params.yaml"), "--preset", "tiny"]
UNK = ["unk", "replace", "--hyp", "{d}/hyp", "--src", "{d}/src", "--dict", "{d}/dict.tsv", "--out", "{d}/out"]
CASES = {
    "ensemble members with different vocabularies (translate)": (
        ["translate", "--model", "{d}/a.pt", "{d}/other_vocab.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/other_vocab.pt: its target vocabulary differs from that of {d}/a.pt",
    ),
    "ensemble members with different vocabularies (align extract)": (
        [
            "align",
            "extract",
            "--model",
            "{d}/a.pt",
            "{d}/other_vocab.pt",
            "--src",
            "{d}/src",
            "--tgt",
            "{d}/tgt",
            "--out",
            "{d}/out",
        ],
        "{d}/other_vocab.pt: its target vocabulary differs from that of {d}/a.pt",
    ),
    "a model without attention given to align extract": (
        [
            "align",
            "extract",
            "--model",
            "{d}/no_attention.pt",
            "--src",
            "{d}/src",
            "--tgt",
            "{d}/tgt",
            "--out",
            "{d}/out",
        ],
        "has no alignment to extract",
    ),
    "a model file whose config has no decoding settings (not written by nmt train)": (
        ["translate", "--model", "{d}/a.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/a.pt: its config has no translate.max_len_ratio, translate.batch_size",
    ),
    "a model file that does not exist": (
        ["translate", "--model", "{d}/missing.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/missing.pt",
    ),
    "unk replace: a position outside the source sentence": (
        UNK + ["--positions", "{d}/pos_outside"],
        "{d}/pos_outside:1: a position lies outside the 3-word source",
    ),
    "unk replace: fewer positions than words": (
        UNK + ["--positions", "{d}/pos_short"],
        "{d}/pos_short:1: 2 positions for 3 words of {d}/hyp:1",
    ),
    "unk replace: a position that is not an integer": (
        UNK + ["--positions", "{d}/pos_words"],
        "{d}/pos_words:1: positions must be integers",
    ),
    "an alignment file with lone CR line endings": (
        SCORE + ["--test", "{d}/links_cr"],
        "{d}/links_cr:1: carriage return inside the line",
    ),
    "a NUL byte in an alignment file": (SCORE + ["--test", "{d}/links_nul"], "{d}/links_nul:2: NUL byte"),
    "a NUL byte in a corpus": (
        ["align", "eflomal", "--src", "{d}/links_nul", "--tgt", "{d}/gold", "--out", "{d}/out"],
        "{d}/links_nul:2: NUL byte",
    ),
    "an empty training split": (PREPARE + ["--raw", "{d}/raw"], "{d}/raw/train.src: the train split is empty"),
    "no training pair within prepare.max_len": (
        PREPARE + ["--raw", "{d}/long"],
        "{d}/long/train.src: none of its 1 training pairs is at most",
    ),
    "a raw reference not in the order of the tokenised test set": (
        [
            "evaluate",
            "--hyp",
            "{d}/ref2",
            "--ref",
            "{d}/ref2",
            "--raw-ref",
            "{d}/raw2",
            "--lang",
            "de",
            "--out",
            "{d}/out",
            "--system",
            "s",
            "--testset",
            "test",
            "--preset-name",
            "demo",
            "--pair",
            "en-de",
        ],
        "{d}/raw2:1: not the sentence of line 1 of {d}/ref2",
    ),
    "a model_config naming an unknown attention": (
        ["translate", "--model", "{d}/unknown_attention.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/unknown_attention.pt: its model_config cannot be built (unknown model.attention 'bogus'",
    ),
    "a model_config without a key": (
        ["translate", "--model", "{d}/no_hidden.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/no_hidden.pt: its model_config has no 'hidden'",
    ),
    "a model_config with a value of the wrong type": (
        ["translate", "--model", "{d}/text_hidden.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/text_hidden.pt: its model_config cannot be built",
    ),
    "a truncated train.pt": (
        TRAIN
        + [
            "--table",
            str(ROOT / "workflow/tables/luong2015_table1.yaml"),
            "--system",
            "base",
            "--data",
            "{d}/badprep",
            "--out",
            "{d}/out",
        ],
        "{d}/badprep/train.pt: not a split written by nmt data prepare (",
    ),
    "data prepare without the training split": (
        PREPARE[:-3] + ["dev", "test", "--raw", "{d}/raw"],
        "nmt data prepare --splits dev test: the 'train' split must be one of them",
    ),
    "an output path under a file": (
        [
            "evaluate",
            "--hyp",
            "{d}/ref2",
            "--ref",
            "{d}/ref2",
            "--lang",
            "de",
            "--out",
            "{d}/src/out",
            "--system",
            "s",
            "--testset",
            "test",
            "--preset-name",
            "demo",
            "--pair",
            "en-de",
        ],
        "{d}/src: a file where a directory should be",
    ),
    "a table row whose paper figure is not one of the table's columns": (
        TRAIN + ["--table", "{d}/paper_key.yaml", "--system", "base", "--data", "{d}/badprep", "--out", "{d}/out"],
        "{d}/paper_key.yaml: row 5 ('Base'): paper key 'perplexity' is not one of the table's columns",
    ),
    "a table system with an unknown attention score": (
        TRAIN
        + [
            "--table",
            "{d}/bogus_score.yaml",
            "--system",
            "global_location",
            "--data",
            "{d}/badprep",
            "--out",
            "{d}/out",
        ],
        "{d}/bogus_score.yaml: system global_location: bad config key model.score",
    ),
    "unk replace: files of different lengths": (UNK + ["--positions", "{d}/pos_two_lines"], "line counts differ"),
    "a report from a mistyped results directory (tests/cli/test_whole_outputs.py: the report it would replace is kept)": (
        [
            "report",
            "--params",
            str(ROOT / "params.yaml"),
            "--preset",
            "tiny",
            "--results",
            "{d}/reslts",
            "--data",
            "{d}/data",
            "--out",
            "{d}/out",
        ],
        "{d}/reslts: no scores files of preset tiny (39 expected, no such directory); a report would be all MISSING",
    ),
    "a model file whose payload is not a dict (translate)": (
        ["translate", "--model", "{d}/list_payload.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/list_payload.pt: not a model file written by nmt train (it holds a list, not a dict)",
    ),
    "a model file whose vocabulary is not a list (evaluate --model)": (
        [
            "evaluate",
            "--hyp",
            "{d}/tgt",
            "--ref",
            "{d}/tgt",
            "--src",
            "{d}/src",
            "--model",
            "{d}/text_vocab.pt",
            "--lang",
            "de",
            "--out",
            "{d}/out",
            "--system",
            "s",
            "--testset",
            "test",
            "--preset-name",
            "demo",
            "--pair",
            "en-de",
        ],
        "{d}/text_vocab.pt: not a model file written by nmt train (its tgt_vocab is a str, not a list of words)",
    ),
    "a model file whose vocabulary holds a number (translate)": (
        ["translate", "--model", "{d}/number_vocab.pt", "--src", "{d}/src", "--out", "{d}/out"],
        "{d}/number_vocab.pt: not a model file written by nmt train (its src_vocab[19] is an int, not a word",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_gets_one_line_and_exit_status_2(nmt, files, case):
    argv, expected = CASES[case]
    assert_one_line(nmt(argv, files), expected.format(d=files))
    assert not (files / "out").exists()
