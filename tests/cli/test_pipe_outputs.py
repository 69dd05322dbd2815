"""Outputs that pipe (issue 60, item 2): `--out -` is the standard output, as fairseq's and joeynmt's users pipe
translations; a target that is not a regular file (/dev/stdout, a device, a named pipe) is written through, and a
symlink is followed, never renamed over (nmt.base.atomic.write_atomic)."""

import os
import subprocess
import sys
import threading

import pytest
import yaml

from nmt.data.text import write_lines_atomic
from nmt.data.vocab import Vocab
from nmt.models.io import save_model

from factories import SRC_WORDS, TGT_WORDS, make_model, model_config
from pipelines import ROOT


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A model file as nmt train writes one, with the translate settings of params.yaml (greedy: quick)."""
    root = tmp_path_factory.mktemp("pipe")
    (root / "src").write_text("s1 s2 s3\n" * 40)
    config = model_config(without=("window",), hidden=8)
    net = make_model(1, config, src_vocab=len(Vocab(SRC_WORDS)), tgt_vocab=len(Vocab(TGT_WORDS)), init=None, train=True)
    translate = {**yaml.safe_load((ROOT / "params.yaml").read_text())["translate"], "beam": 1}
    save_model(root / "a.pt", net, Vocab(SRC_WORDS), Vocab(TGT_WORDS), {"model": config, "translate": translate})
    return root / "a.pt", root / "src"


def translate(model, out: str, shell_tail: str = ""):
    path, src = model
    command = f"{sys.executable} -m nmt.cli translate --model {path} --src {src} --out {out} --device cpu{shell_tail}"
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)


def test_out_dash_writes_the_translations_to_stdout_and_a_pipe_closed_early_is_no_error(model, tmp_path):
    whole = translate(model, "-")
    assert whole.returncode == 0, whole.stderr
    assert len(whole.stdout.splitlines()) == 40 and not (tmp_path / "-").exists()
    head = translate(model, "-", " | head -n 1")
    assert head.returncode == 0 and len(head.stdout.splitlines()) == 1 and "Traceback" not in head.stderr


def test_a_symlink_out_is_followed_and_stays_a_symlink(model, tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "stdout"
    link.symlink_to(real)
    done = translate(model, str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and len(real.read_text().splitlines()) == 40
    device = tmp_path / "devnull"  # as /dev/stdout: a symlink to what is not a regular file
    device.symlink_to(os.devnull)
    assert translate(model, str(device)).returncode == 0
    assert device.is_symlink() and os.readlink(device) == os.devnull
    assert sorted(p.name for p in tmp_path.iterdir()) == ["devnull", "real.txt", "stdout"]  # no temporary file left


def test_a_named_pipe_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_lines_atomic(fifo, ["a b", "c"])
    reader.join(timeout=30)
    assert got == ["a b\nc\n"] and fifo.is_fifo()
