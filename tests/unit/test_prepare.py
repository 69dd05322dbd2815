"""Prepare: top-K vocabulary with <unk>, training-only length filter, binarised splits, bucketed batches."""

import pytest
import torch

from nmt.data.batches import bucketed_batches, make_batch
from nmt.data.prepare import load_split, prepare
from nmt.data.text import CorpusError
from nmt.data.vocab import EOS_ID, PAD_ID, UNK_ID, Vocab


def write_pair(d, split, src, tgt):
    (d / f"{split}.src").write_text("".join(s + "\n" for s in src))
    (d / f"{split}.tgt").write_text("".join(t + "\n" for t in tgt))


def test_vocab_is_top_k_by_frequency_with_deterministic_ties():
    vocab = Vocab.build(["b a a c", "c d"], size=2)
    assert vocab.itos[4:] == ["a", "c"]  # a:2, c:2 (alphabetical tie-break); b and d fall out
    assert vocab.encode("a b z") == [vocab.stoi["a"], UNK_ID, UNK_ID]


def test_prepare_filters_only_training_pairs_and_maps_rare_words_to_unk(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    long = " ".join(["w"] * 6)
    write_pair(raw, "train", ["a b", "a c", long], ["x y", "x z", "x"])
    write_pair(raw, "test", [long, "a q"], ["x", "x q"])
    stats = prepare(
        raw,
        tmp_path / "out",
        splits=["train", "test"],
        src_lang="en",
        tgt_lang="de",
        max_len=5,
        src_vocab=1,
        tgt_vocab=10,
    )
    assert stats["train_dropped_by_length"] == 1
    assert stats["splits"]["train"]["sentences"] == 2
    assert stats["splits"]["test"]["sentences"] == 2  # test sentences are never dropped
    src, tgt = load_split(tmp_path / "out" / "test.pt")
    vocab = Vocab.load(tmp_path / "out" / "vocab.src")
    assert vocab.itos[4:] == ["a"]
    assert src[0] == [UNK_ID] * 6 and src[1] == [vocab.stoi["a"], UNK_ID]
    assert (tmp_path / "out" / "test.src").read_text().splitlines() == [long, "a q"]


def test_prepare_tokenises_raw_text_with_sacremoses(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    write_pair(raw, "train", ["Hello, world!"], ["Hallo, Welt!"])
    prepare(
        raw,
        tmp_path / "out",
        splits=["train"],
        src_lang="en",
        tgt_lang="de",
        max_len=50,
        src_vocab=100,
        tgt_vocab=100,
        tokenize=True,
    )
    assert (tmp_path / "out" / "train.src").read_text() == "Hello , world !\n"


def test_mismatched_corpus_is_named(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    write_pair(raw, "train", ["a", "b"], ["x"])
    with pytest.raises(CorpusError, match="train.src"):
        prepare(
            raw, tmp_path / "out", splits=["train"], src_lang="en", tgt_lang="de", max_len=5, src_vocab=10, tgt_vocab=10
        )
    assert not (tmp_path / "out" / "train.pt").exists()


def test_bucketed_batches_cover_every_sentence_once_and_depend_only_on_seed_and_epoch():
    src = [[4] * (i % 17 + 1) for i in range(500)]
    tgt = [[5] * (i % 13 + 1) for i in range(500)]
    a = bucketed_batches(src, tgt, 16, seed=3, epoch=2)
    assert sorted(i for b in a for i in b) == list(range(500))
    assert a == bucketed_batches(src, tgt, 16, seed=3, epoch=2)
    assert a != bucketed_batches(src, tgt, 16, seed=3, epoch=3)
    spread = [max(len(src[i]) for i in b) - min(len(src[i]) for i in b) for b in a]
    assert sum(spread) / len(spread) < 4  # batches hold sentences of similar length


def test_make_batch_pads_and_adds_boundary_symbols():
    batch = make_batch([[7, 8, 9], [7]], [[5], [5, 6]], [0, 1])
    assert batch.src.tolist() == [[7, 8, 9], [7, PAD_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[2, 5, PAD_ID], [2, 5, 6]]
    assert batch.tgt_out.tolist() == [[5, EOS_ID, PAD_ID], [5, 6, EOS_ID]]
    assert batch.n_tokens == 5


@pytest.mark.parametrize("room", [0, 3000, 120_000])
def test_a_split_written_to_a_full_disk_is_an_oserror_naming_it_and_the_old_one_stays(tmp_path, monkeypatch, room):
    """torch's zip writer turns the disk's ENOSPC into a RuntimeError of its own: the prepared split's save
    (nmt.data.torch_files.save_torch, as models and checkpoints) raises the disk's OSError naming the file, which
    `nmt` says in one line, and the split already there is left byte for byte."""
    import errno

    import nmt.base.atomic
    from nmt.data.torch_files import save_torch

    from stand_ins import FullDisk

    path = tmp_path / "train.pt"
    save_torch({"src": [1, 2, 3]}, path)
    before = path.read_bytes()
    monkeypatch.setattr(nmt.base.atomic, "os", FullDisk(room))
    blob = {"src": {"data": torch.arange(50_000, dtype=torch.int32)}}
    with pytest.raises(OSError) as err:
        save_torch(blob, path)
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["train.pt"]
