"""The rendered report in headless Chromium (Debian's chromium and chromium-driver, driven by selenium; `.ci/run`
installs them, elsewhere a test skips where they are absent: tests/required.py), and what a phone shows of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import required

PHONE = {"width": 390, "height": 844}  # CSS pixels of a current phone, upright

# At a phone's size: the page's width against the screen's; in each results table that scrolls in its box, the
# width of its pinned (sticky) cells in its first row against the box's; and each status or verdict pill that
# reaches past its cell.
PHONE_LAYOUT = """
const viewport = document.documentElement.clientWidth;
const pinned = Array.from(document.querySelectorAll('.scroll > table.results'))
  .filter(t => t.getClientRects().length > 0).map(t => {
    const row = t.querySelector('tr');
    const width = Array.from(row.children).filter(c => getComputedStyle(c).position === 'sticky')
      .reduce((sum, c) => sum + c.getBoundingClientRect().width, 0);
    return {where: (t.closest('section, footer') || {id: ''}).id + ': ' + row.textContent.trim().slice(0, 30),
            pinned: width, box: t.parentElement.getBoundingClientRect().width};
  });
const pills = Array.from(document.querySelectorAll('.st, .verdict')).filter(p => p.getClientRects().length > 0)
  .map(p => [p.textContent, p.getBoundingClientRect(), p.closest('td, th').getBoundingClientRect()])
  .filter(([, pill, cell]) => pill.left < cell.left - 0.5 || pill.right > cell.right + 0.5
          || pill.top < cell.top - 0.5 || pill.bottom > cell.bottom + 0.5).map(([text]) => text);
return {viewport, width: document.documentElement.scrollWidth, pinned, pills};
"""


def open_browser():
    webdriver = required.module("selenium.webdriver")
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        required.unavailable("Debian's chromium and chromium-driver are not installed")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--allow-file-access-from-files",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def phone_layout(page: Path) -> dict:
    """PHONE_LAYOUT of ``page`` on a phone's screen (a mobile viewport: the page's meta viewport applies, and the
    scroll bars take no width)."""
    browser = open_browser()
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**PHONE, "deviceScaleFactor": 3, "mobile": True})
        browser.get(Path(page).resolve().as_uri())
        return browser.execute_script(PHONE_LAYOUT)
    finally:
        browser.quit()


def phone_problems(layout: dict) -> list[str]:
    """What a phone's reader of ``layout`` (phone_layout) meets: a page wider than the screen, pinned columns that
    take more than a third of their box, a pill outside its cell."""
    problems = []
    if layout["width"] > layout["viewport"]:
        problems.append(f"the page is {layout['width']} px wide on a {layout['viewport']} px screen")
    problems += [
        f"{t['where']!r}: pinned columns {t['pinned']:.0f} px of a {t['box']:.0f} px box"
        for t in layout["pinned"]
        if t["pinned"] > t["box"] / 3
    ]
    problems += [f"a pill outside its cell: {text!r}" for text in layout["pills"]]
    return problems
