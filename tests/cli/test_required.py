"""tests/required.py: outside CI a missing tool or data file skips the test; with NMT_REQUIRE_ALL=1 (CI) it fails."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]  # tests/, where required.py lives


@pytest.mark.parametrize("strict, outcome", [("0", "2 skipped"), ("1", "2 failed")])
def test_a_missing_requirement_skips_outside_ci_and_fails_in_it(tmp_path, strict, outcome):
    (tmp_path / "test_needs.py").write_text(
        textwrap.dedent("""
        import required

        def test_missing_tool():
            required.unavailable("tool X is not installed")

        @required.skip_unless(False, "data Y is absent")
        def test_missing_data():
            raise FileNotFoundError("Y")
    """)
    )
    env = {**os.environ, "NMT_REQUIRE_ALL": strict, "PYTHONPATH": str(HERE)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.stdout.strip().splitlines()[-1].startswith(outcome), done.stdout
