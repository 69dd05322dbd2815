"""`nmt --version`: the package's version and, where the package is a git checkout, the commit of its source."""

from __future__ import annotations

import nmt

from ..base.environment import git_commit, git_dirty


def version_line() -> str:
    commit = git_commit(short=True)
    if commit is None:  # an installed package, not a checkout
        return f"nmt {nmt.__version__}"
    changes = ", with uncommitted changes" if git_dirty() else ""
    return f"nmt {nmt.__version__} (commit {commit}{changes})"
