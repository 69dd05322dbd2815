"""What a reader meets on the report page, checked without a browser (tests/cli/test_report_phone.py measures the same
page in Chromium at a phone's size): headings that name the paper, its table or figure and what was run; the CSS
rules that keep the page to a phone's screen; and a missing-files box that counts what it lists."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from nmt import config as cfg
from nmt.report import render_report
from nmt.report.assemble import report_inputs
from nmt.report.headings import corpus_in_words, heading, short_citation
from nmt.report.render import missing_in_words

ROOT = Path(__file__).resolve().parents[2]
PHONE_PX = 390
REM_PX = 16


@pytest.fixture(scope="module")
def tiny_page(tmp_path_factory) -> str:
    """The tiny preset's report with one scores file (--partial): every section there, most results missing."""
    where = tmp_path_factory.mktemp("tiny")
    scores = where / "results" / "en-de" / "scores" / "base.test.json"
    scores.parent.mkdir(parents=True)
    scores.write_text(json.dumps({"system": "base", "testset": "test", "preset": "tiny", "pair": "en-de", "ppl": 12.5}))
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    inputs, _ = report_inputs(config, ROOT / "params.yaml", where / "results", where / "data", partial=True)
    return render_report(inputs, where / "report").read_text()


def css_rules(page: str) -> list[tuple[str | None, str, dict[str, str]]]:
    """The page's style sheet as (media query or None, selector, {property: value}), comments left out."""
    css = re.sub(r"/\*.*?\*/", "", page[page.index("<style>") + 7 : page.index("</style>")], flags=re.S)
    rules, media = [], None
    for token in re.finditer(r"(@media[^{]*)\{|([^{}]+)\{([^{}]*)\}|\}", css):
        if token.group(1):
            media = token.group(1).strip()
        elif token.group(2):
            body = dict(
                tuple(part.strip() for part in decl.split(":", 1)) for decl in token.group(3).split(";") if ":" in decl
            )
            for selector in token.group(2).split(","):
                rules.append((media, " ".join(selector.split()), body))
        else:
            media = None
    return rules


def declared(rules, selector: str, prop: str, media: str | None = None) -> str | None:
    found = [body[prop] for m, s, body in rules if s == selector and prop in body and (m == media)]
    return found[-1] if found else None


def px(length: str, screen: int) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(px|rem|vw)", length).groups()
    return float(number) * {"px": 1, "rem": REM_PX, "vw": screen / 100}[unit]


# -- headings ------------------------------------------------------------------------------------------------------
def test_a_heading_names_the_paper_its_number_and_what_ran():
    assert (
        short_citation("Luong, Pham, Manning (2015), Effective Approaches to Attention-based NMT")
        == "Luong et al. (2015)"
    )
    assert short_citation("Bahdanau and Cho (2014), Neural machine translation") == "Bahdanau and Cho (2014)"
    assert short_citation("A paper") == "A paper"
    assert corpus_in_words({"corpus": "multi30k", "src_lang": "en", "tgt_lang": "de"}) == "multi30k En-De"
    assert heading(
        "Luong, Pham, Manning (2015), Effective", "Table 1: WMT'14 English-German results", "multi30k En-De"
    ) == {"text": "Luong et al. (2015), Table 1, on multi30k En-De", "paper_title": "WMT'14 English-German results"}
    # a table of our own has no number: its title is its name
    assert (
        heading(
            "Luong, Pham, Manning (2015), Effective (Table 1 systems)",
            "News-domain check: WMT sample",
            "wmt_opennmt_sample En-De",
        )["text"]
        == "Luong et al. (2015), News-domain check: WMT sample, on wmt_opennmt_sample En-De"
    )


def test_each_section_and_contents_entry_names_its_paper_and_the_corpus_that_ran(tiny_page):
    sections = re.findall(r'<section id="([\w-]+)">\n<h2>(.*?)</h2>', tiny_page)
    headings = {sid: html.unescape(re.sub(r"<[^>]+>", "", h)) for sid, h in sections}
    assert headings["luong2015_table1"] == (
        "Luong et al. (2015), Table 1, on synth En-De \u2014 in the paper: WMT'14 English-German results"
    )
    assert headings["peter2017_table1"].startswith("Peter et al. (2017), Table 1, on synth De-En \u2014 in the paper:")
    assert headings["raffel2017_table4"].startswith("Raffel et al. (2017), Table 4, on synth En-De")  # tiny's en-vi
    assert headings["luong2015_figure7"].startswith("Luong et al. (2015), Figure 7, on synth En-De")
    toc = tiny_page[tiny_page.index('<nav class="toc">') : tiny_page.index("</nav>")]
    entries = [html.unescape(e) for e in re.findall(r'<li><a href="#\w+">([^<]*(?:Table|Figure)[^<]*)</a>', toc)]
    assert "Luong et al. (2015), Table 1, on synth En-De" in entries
    assert "Peter et al. (2017), Table 1, on synth De-En" in entries
    assert len(entries) == len(set(entries))  # two papers' Table 1 told apart


# -- a phone's screen ----------------------------------------------------------------------------------------------
def test_on_a_phone_a_results_table_pins_its_first_column_only_within_a_third_of_its_box(tiny_page):
    rules = css_rules(tiny_page)
    phones = [m for m, _, _ in rules if m and (w := re.search(r"max-width:\s*(\d+)px", m)) and int(w[1]) >= PHONE_PX]
    assert phones, "no media query for a phone's width"
    media = phones[0]
    first = ".scroll > table.results > * > tr > :first-child"
    last = ".scroll > table.results > * > tr > :last-child"
    assert declared(rules, first, "position") == "sticky" and declared(rules, last, "position") == "sticky"
    assert declared(rules, last, "position", media) == "static"
    padding = declared(rules, "body", "padding", media).split()[1]  # the page's sides on a phone
    box = PHONE_PX - 2 * px(padding, PHONE_PX)
    # a table cell takes its width between min-width and max-width: all three fixed, the label's 13rem gives way
    widths = {declared(rules, first, side, media) for side in ("width", "min-width", "max-width")}
    assert len(widths) == 1 and px(widths.pop(), PHONE_PX) <= box / 3
    assert declared(rules, first, "overflow-wrap", media) == "anywhere"  # a longer word breaks, not widens it
    # stretched to its box, a wide table's few columns share the spare width, the pinned one too
    assert declared(rules, ".scroll > table.results.wide", "width", media) == "auto"


def test_long_paths_wrap_and_pills_stay_inside_their_cells(tiny_page):
    rules = css_rules(tiny_page)
    assert declared(rules, ".alert", "overflow-wrap") == "anywhere"  # the missing-files box's paths
    assert declared(rules, "body", "overflow-wrap") in ("break-word", "anywhere")  # any other long word
    assert declared(rules, "td.mono", "overflow-wrap") == "anywhere"
    for pill in (".st", ".verdict"):
        assert declared(rules, pill, "max-width") == "100%" and declared(rules, pill, "overflow-wrap") == "anywhere"
    assert 'class="st missing"' in tiny_page and 'class="verdict' in tiny_page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in tiny_page


# -- the missing-files box -----------------------------------------------------------------------------------------
def test_the_missing_files_box_counts_what_it_lists_by_kind(tiny_page):
    box = tiny_page[tiny_page.index("<strong>MISSING results:</strong>") :]
    box = box[: box.index("</ul>")]
    listed = re.findall(r"<li><code>(.*?)</code></li>", box)
    kinds = {"scores": "/scores/", "attention": "/attention/", "prepared": "/prepared/"}
    counts = {kind: sum(part in path for path in listed) for kind, part in kinds.items()}
    assert sum(counts.values()) == len(listed) and all(counts.values())
    said = (
        f"{len(listed)} expected files ({counts['scores']} scores files, {counts['attention']} attention files "
        f"and {counts['prepared']} prepared test-set file{'' if counts['prepared'] == 1 else 's'}) not found"
    )
    assert said in html.unescape(box)


def test_the_missing_count_in_words():
    assert (
        missing_in_words(["scores"] * 33 + ["attention"] * 2 + ["translation"])
        == "36 expected files (33 scores files, 2 attention files and 1 translation)"
    )
    assert missing_in_words(["scores"] * 19) == "19 expected scores files"
    assert missing_in_words(["translation"]) == "1 expected translation"
