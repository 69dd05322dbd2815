"""Every run file has one home (issue 59, item 1): no module, schema, template or rule outside nmt/records and
nmt/base/layout.py names a run file (its code, docstrings and comments included); they say "the metrics file" or
take the name from its records module."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_FILE_NAMES = re.compile(r"metrics\.jsonl|model\.json|claims\.json|summary\.json|scores/")
HOMES = ("nmt/records/", "nmt/base/layout.py")


def searched() -> list[Path]:
    """The text files of nmt/, workflow/ and the Snakefile; the stage files `nmt dvc-yaml` writes from the layout
    (dvc.yaml) are its output, not a second home."""
    files = [ROOT / "Snakefile"]
    for top in ("nmt", "workflow"):
        files += [
            p
            for p in sorted((ROOT / top).rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.name != "dvc.yaml"
        ]
    return files


def test_no_run_file_is_named_outside_its_records_module_and_the_layout():
    found = []
    for path in searched():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(HOMES):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a binary file (a compiled library, an image)
            continue
        found += [
            f"{relative}:{number}: {line.strip()}"
            for number, line in enumerate(text.split("\n"), start=1)
            if RUN_FILE_NAMES.search(line)
        ]
    assert not found, "run files named outside nmt/records and nmt/base/layout.py:\n" + "\n".join(found)


def test_the_search_covers_the_package_and_the_workflow():
    names = {p.relative_to(ROOT).as_posix() for p in searched()}
    assert {
        "Snakefile",
        "nmt/report/render.py",
        "nmt/report/templates/index.html.j2",
        "workflow/rules/jobs.smk",
    } <= names
