"""The docs stay readable: no paragraph (a list item counts as one) over 150 words and no table cell over 300
characters; what is longer becomes a list or a page of its own."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("docs/internals/*.md")])
MAX_WORDS = 150
MAX_CELL = 300
LIST_ITEM = re.compile(r"([-*+]|\d+[.)])\s")


def blocks(text: str) -> list[tuple[str, str]]:
    """(kind, text) of a Markdown page: each paragraph or list item, and each table cell; code blocks left out."""
    found, paragraph, in_code = [], [], False

    def end_paragraph():
        if paragraph:
            found.append(("paragraph", " ".join(paragraph)))
            paragraph.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            end_paragraph()
            in_code = not in_code
        elif in_code:
            continue
        elif not stripped or stripped.startswith("#"):
            end_paragraph()
        elif stripped.startswith("|"):
            end_paragraph()
            found += [("cell", cell.strip()) for cell in stripped.strip("|").split("|")]
        else:
            if LIST_ITEM.match(stripped):
                end_paragraph()
            paragraph.append(stripped)
    end_paragraph()
    return found


def test_paragraphs_and_table_cells_are_short():
    long = []
    for page in DOCS:
        for kind, text in blocks(page.read_text(encoding="utf-8")):
            if kind == "paragraph" and len(text.split()) > MAX_WORDS:
                long.append(f"{page.relative_to(ROOT)}: a paragraph of {len(text.split())} words: {text[:60]}...")
            if kind == "cell" and len(text) > MAX_CELL:
                long.append(f"{page.relative_to(ROOT)}: a table cell of {len(text)} characters: {text[:60]}...")
    assert not long, "\n".join(long)


def test_the_limits_see_a_long_paragraph_and_a_long_cell():
    text = "intro\n\n" + "word " * 151 + "\n\n| a | b |\n|---|---|\n| " + "x" * 301 + " | y |\n\n```\n" + "c " * 200
    kinds = [(kind, len(body.split()) if kind == "paragraph" else len(body)) for kind, body in blocks(text)]
    assert ("paragraph", 151) in kinds and ("cell", 301) in kinds
    assert all(kind != "paragraph" or size <= 151 for kind, size in kinds)  # the code block is not a paragraph
