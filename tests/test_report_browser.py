"""The rendered report in a real browser (headless Chromium from Debian's packages, driven by selenium): every
image loads, every internal link resolves, and the Claims section is there to see. `.ci/run` installs chromium and
chromium-driver; elsewhere the test skips where they are absent (tests/required.py)."""
import shutil
from urllib.parse import unquote, urlparse

import pytest

import required


def open_browser():
    webdriver = required.module("selenium.webdriver")
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        required.unavailable("Debian's chromium and chromium-driver are not installed")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--allow-file-access-from-files"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


@pytest.mark.pipeline("snakemake")
def test_the_report_opens_in_a_browser_with_its_images_links_and_claims(tiny_runs):
    from selenium.webdriver.common.by import By
    page = tiny_runs["snakemake"].workdir / "reports/tiny/index.html"
    browser = open_browser()
    try:
        browser.get(page.as_uri())  # returns once the page has loaded, images included
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])")
        assert len(images) >= 8
        assert [src for src, loaded in images if not loaded] == []
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
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
        assert "claims reproduced on tiny" in heading
        rows = claims.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) >= 20 and all(row.is_displayed() for row in rows[:3])
    finally:
        browser.quit()
