"""requirements/cpu.lock against pyproject.toml: every dependency of the install CI makes (the package's own, the
workflow and test extras'), torch aside, is pinned there with its hashes, at a version pyproject's range allows."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "cpu.lock"
UNLOCKED = {"torch"}  # installed first: the CPU wheel, or a GPU user's CUDA build (requirements/lock.sh)


def locked() -> dict[str, tuple[str, int]]:
    """{package: (pinned version, number of hashes)} of the lock file."""
    pins: dict[str, tuple[str, int]] = {}
    current = None
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
        if pin:
            current = canonicalize_name(pin[1])
            pins[current] = (pin[2], 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
    return pins


def test_the_lock_pins_every_dependency_of_pyproject_within_its_range_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [
        *project["dependencies"],
        *project["optional-dependencies"]["workflow"],
        *project["optional-dependencies"]["test"],
    ]
    pins = locked()
    assert len(pins) > len(wanted)  # and their own dependencies
    assert all(hashes for _, hashes in pins.values()), [name for name, (_, h) in pins.items() if not h]
    for spec in wanted:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        if name in UNLOCKED:
            assert name not in pins
            continue
        assert name in pins, f"{name}: in pyproject.toml, not in {LOCK.name} (bash requirements/lock.sh)"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), (spec, pins[name][0])


def test_pre_commit_runs_the_ruff_the_lock_pins():
    """The style a commit is checked against before it is made is the one CI checks (the README's test command)."""
    config = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    rev = re.search(r"astral-sh/ruff-pre-commit\n\s+rev: v(\S+)", config)
    assert rev and rev[1] == locked()["ruff"][0]
