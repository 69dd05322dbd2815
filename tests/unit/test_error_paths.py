"""The one place that turns expected failures into one line (nmt.cli main): a full disk or a read-only directory
when writing (injected here: the tests run as root), Ctrl-C outside a training, and our own bugs, which keep their
traceback and ask to be reported. Earlier files stay as they were."""

import errno
import os
import tempfile

import pytest

from nmt.cli import main


@pytest.fixture()
def evaluate(tmp_path):
    (tmp_path / "hyp").write_text("a b c\n")
    out = tmp_path / "scores.json"
    out.write_text("earlier scores\n")
    return out, [
        "evaluate",
        "--hyp",
        str(tmp_path / "hyp"),
        "--ref",
        str(tmp_path / "hyp"),
        "--lang",
        "de",
        "--out",
        str(out),
        "--system",
        "s",
        "--testset",
        "test",
        "--preset-name",
        "p",
        "--pair",
        "en-de",
    ]


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_full_disk_is_one_line_naming_the_file_and_the_earlier_file_stays(evaluate, capsys, monkeypatch):
    out, argv = evaluate

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert main(argv) == 2
    assert one_line(capsys) == f"nmt: error: {out}: No space left on device"
    assert out.read_text() == "earlier scores\n" and [p.name for p in out.parent.iterdir() if ".tmp" in p.name] == []


def test_a_read_only_directory_is_one_line_naming_the_file(evaluate, capsys, monkeypatch):
    out, argv = evaluate

    def refused(*args, dir=None, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.path.join(dir, ".scores.json.x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    assert main(argv) == 2
    assert one_line(capsys) == f"nmt: error: {out}: Permission denied"
    assert out.read_text() == "earlier scores\n"


def test_ctrl_c_outside_a_training_is_one_line_and_exit_130(evaluate, capsys, monkeypatch):
    _, argv = evaluate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("nmt.scoring.evaluate.evaluate_files", interrupted)  # where `nmt evaluate` scores
    assert main(argv) == 130
    assert one_line(capsys) == "nmt: interrupted"


def test_our_own_bug_keeps_its_traceback_and_asks_to_be_reported(evaluate, capsys, monkeypatch):
    _, argv = evaluate

    def bug(*args, **kwargs):
        return 1 / 0

    monkeypatch.setattr("nmt.scoring.evaluate.evaluate_files", bug)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err
    assert err.strip().splitlines()[-1] == (
        "nmt: internal error: the traceback above is a bug in nmt; please report it with the command that gave it"
    )
