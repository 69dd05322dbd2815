"""The rendered report in a real browser (headless Chromium from Debian's packages, driven by selenium: tests/browser.py):
every image loads, every internal link resolves, the Claims section is there to see, and the page fits a laptop's
window and a phone's screen."""

from urllib.parse import unquote, urlparse

import pytest

from browser import open_browser, phone_layout, phone_problems


@pytest.mark.pipeline("snakemake")
def test_the_report_opens_in_a_browser_with_its_images_links_and_claims(tiny_runs):
    from selenium.webdriver.common.by import By

    page = tiny_runs["snakemake"].workdir / "reports/tiny/index.html"
    browser = open_browser()
    try:
        browser.get(page.as_uri())  # returns once the page has loaded, images included
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"
        )
        assert len(images) >= 8
        assert [src for src, loaded in images if not loaded] == []
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
        )
        broken = []
        for href in links:
            parsed = urlparse(href)
            if parsed.scheme in ("http", "https", "mailto"):
                continue  # not ours to check offline
            if href.startswith("#"):
                if not browser.find_elements(By.ID, unquote(href[1:])):
                    broken.append(href)
            elif not (page.parent / unquote(parsed.path)).is_file():
                broken.append(href)
        assert broken == [] and any(h.startswith("#") for h in links)
        claims = browser.find_element(By.ID, "claims")
        assert claims.is_displayed()
        heading = claims.find_element(By.CSS_SELECTOR, "p.tally").text
        assert "on tiny" in heading and ("judged" in heading or "tested" in heading)  # "No claim tested on tiny: ..."
        rows = claims.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) >= 20 and all(row.is_displayed() for row in rows[:3])
    finally:
        browser.quit()


# Each table's last column (a results table's status or verdict) and the page's own width, at a window size: what
# a reader of the page as it opens (its details closed) sees without scrolling sideways.
LAYOUT = """
const viewport = document.documentElement.clientWidth;
const tables = Array.from(document.querySelectorAll('table')).filter(t => t.getClientRects().length > 0).map(t => {
  const last = t.querySelector('tr').lastElementChild.getBoundingClientRect();
  const box = t.parentElement.getBoundingClientRect();
  const section = t.closest('section, footer');
  return {where: (section ? section.id : '') + ': ' + t.querySelector('tr').textContent.trim().slice(0, 40),
          right: last.right, limit: Math.min(viewport, box.right),
          wider: t.getBoundingClientRect().width > box.width + 1,
          sticky: getComputedStyle(t.querySelector('tr').lastElementChild).position === 'sticky'};
});
return {viewport, width: document.documentElement.scrollWidth, tables};
"""


def page_layout(browser, page, width=1400, height=900) -> dict:
    browser.set_window_size(width, height)
    browser.get(page.as_uri())
    return browser.execute_script(LAYOUT)


@pytest.mark.pipeline("snakemake")
def test_the_report_fits_a_1400_px_window_with_every_tables_last_column_in_view(tiny_runs):
    """At a laptop's 1400 px no table makes the page wider than the window: a table wider than the page scrolls
    inside its own box, with its last column held in view (sticky)."""
    page = tiny_runs["snakemake"].workdir / "reports/tiny/index.html"
    browser = open_browser()
    try:
        layout = page_layout(browser, page)
    finally:
        browser.quit()
    assert layout["width"] <= 1400 and layout["width"] == layout["viewport"]
    assert len(layout["tables"]) >= 20
    cut = [t["where"] for t in layout["tables"] if t["right"] > t["limit"] + 1]
    assert cut == []
    assert all(t["sticky"] for t in layout["tables"] if t["wider"])  # a table that scrolls keeps its last column


@pytest.mark.pipeline("snakemake")
def test_the_report_reads_on_a_phone(tiny_runs):
    """At 390 px the page is no wider than the screen, a results table's pinned columns take at most a third of its
    box, and every status and verdict pill stays inside its cell (tests/browser.py)."""
    layout = phone_layout(tiny_runs["snakemake"].workdir / "reports/tiny/index.html")
    assert len(layout["pinned"]) >= 10
    assert phone_problems(layout) == []
