"""Provenance: "uncommitted changes" (model.json's environment.code.dirty) means tracked files changed; untracked
files (a log redirected into the checkout, `dvc plots show`'s dvc_plots/) do not count, and the project's .gitignore
keeps the tools' outputs out of `git status`. Checked on a git repository made in tmp_path."""

import shutil
import subprocess
from pathlib import Path

import pytest

from nmt.base import environment

ROOT = Path(__file__).resolve().parents[2]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.org", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A repository with one commit: a package `code/` (its __init__.py) and a README."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "README.md").write_text("a project\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_untracked_files_are_no_uncommitted_changes(checkout):
    (checkout / "train.log").write_text("a log redirected into the checkout\n")
    (checkout / "dvc_plots").mkdir()
    (checkout / "dvc_plots" / "index.html").write_text("<html></html>\n")
    assert git(checkout, "status", "--porcelain")  # git sees them...
    assert environment.git_dirty(checkout / "code") is False  # ...the code is as committed


@pytest.mark.parametrize("change", ["modified", "staged", "deleted"])
def test_a_changed_tracked_file_is_an_uncommitted_change(checkout, change):
    if change == "modified":
        (checkout / "code" / "__init__.py").write_text("VALUE = 2\n")
    elif change == "staged":
        (checkout / "code" / "new.py").write_text("NEW = 1\n")
        git(checkout, "add", "code/new.py")
    else:
        (checkout / "README.md").unlink()
    assert environment.git_dirty(checkout / "code") is True


def test_a_training_s_environment_records_the_commit_and_no_changes_beside_a_log(checkout, monkeypatch):
    """describe() (model.json's `environment`) of code imported from the checkout: its commit, and clean with a log
    file and a plots directory beside it; dirty once its code changes."""
    monkeypatch.setattr(environment, "CODE_DIR", checkout / "code")
    (checkout / "nohup.out").write_text("training...\n")
    head = git(checkout, "rev-parse", "HEAD").strip()
    assert environment.describe()["code"] == {"commit": head, "dirty": False}
    (checkout / "code" / "__init__.py").write_text("VALUE = 3\n")
    assert environment.describe()["code"] == {"commit": head, "dirty": True}


def test_the_project_s_gitignore_keeps_dvc_plots_out_of_git_status(checkout):
    """With the project's .gitignore, what `dvc plots show` writes (dvc_plots/) and the runs' outputs are ignored."""
    shutil.copyfile(ROOT / ".gitignore", checkout / ".gitignore")
    for path in ("dvc_plots/index.html", "results/demo/en-de/models/base/model.pt", "logs/demo/train/base.log"):
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_text("output\n")
        assert git(checkout, "check-ignore", path).strip() == path
    assert git(checkout, "status", "--porcelain") == "?? .gitignore\n"
