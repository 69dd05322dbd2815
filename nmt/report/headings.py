"""The heading of a table's or figure's section and its contents entry: its paper, its number and what was run
("Luong et al. (2015), Table 1, on multi30k En-De"), with the paper's own title beside it. Built here once, from the
table or figure file's paper and title and the corpus the preset ran for its task."""

from __future__ import annotations

import re

# "Table 1: WMT'14 English-German results": the paper's number, then what the paper's table is
NUMBERED = re.compile(r"^(?P<number>(?:Table|Figure) \w+):\s*(?P<subject>\S.*)$")
# "Luong, Pham, Manning (2015), Effective Approaches ...": the authors' surnames, then the year
CITED = re.compile(r"^(?P<authors>[^()]+?)\s*\((?P<year>\d{4}[a-z]?)\)")


def short_citation(paper: str) -> str:
    """The paper as a heading cites it: "Luong, Pham, Manning (2015), ..." -> "Luong et al. (2015)"; two authors are
    both named; a paper written otherwise is left as it is."""
    cited = CITED.match(paper.strip())
    if not cited:
        return paper.strip()
    authors = [a.strip() for a in re.split(r",|\band\b|&", cited["authors"]) if a.strip()]
    if len(authors) > 2:
        names = f"{authors[0]} et al."
    else:
        names = " and ".join(authors)
    return f"{names} ({cited['year']})"


def corpus_in_words(spec: dict) -> str:
    """A preset's corpus for a task (data.tasks.{task}, through same_as) as the heading says it: "multi30k En-De"."""
    return f"{spec['corpus']} {spec['src_lang'].capitalize()}-{spec['tgt_lang'].capitalize()}"


def heading(paper: str, title: str, ran_on: str) -> dict:
    """{"text": "<paper>, <number>, on <ran_on>", "paper_title": what the paper's table or figure is, or None}.
    A title with no "Table N:" or "Figure N:" (a table of our own) is its own name, and has no paper title beside
    it."""
    numbered = NUMBERED.match(title.strip())
    name = numbered["number"] if numbered else title.strip()
    return {
        "text": f"{short_citation(paper)}, {name}, on {ran_on}",
        "paper_title": numbered["subject"] if numbered else None,
    }
