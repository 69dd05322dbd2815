"""What CI must have. Outside CI a test whose tool, compiled helper or shared data is missing skips with the reason;
with NMT_REQUIRE_ALL=1 (set by .ci/run, which installs every tool and has ../shared beside the clone) the same test
fails instead, so a skip can never hide a failure in CI."""

from __future__ import annotations

import importlib
import os

import pytest

STRICT = os.environ.get("NMT_REQUIRE_ALL") == "1"


def unavailable(reason: str):
    """Skip the running test because `reason`; in CI (NMT_REQUIRE_ALL=1) fail it."""
    if STRICT:
        pytest.fail(f"NMT_REQUIRE_ALL=1 (CI), but {reason}")
    pytest.skip(reason)


def skip_unless(present: bool, reason: str) -> pytest.MarkDecorator:
    """pytest.mark.skipif(not present) outside CI; in CI the test runs (and fails on what is missing)."""
    return pytest.mark.skipif(not present and not STRICT, reason=reason)


def module(name: str):
    """pytest.importorskip that fails in CI."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        unavailable(f"cannot import {name} ({err})")
