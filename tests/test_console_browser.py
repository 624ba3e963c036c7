"""The web console in a real browser: Debian's headless Chromium driven by Selenium, against a
real stack (the API over HTTP on a loopback port, warm workers on its Redis fetching the
loopback test site, the database), as an account holder uses it.

One walk through, step by step, a screenshot after each into ``var/e2e-screenshots/`` (kept
when a step fails; ``KEEP_SCREENSHOTS=1`` keeps them always): sign in, see the balance and the
chart, history lines with hostile URLs shown as text with no script run, start a batch and
watch its bar reach 100 % without a reload, download its CSV, create and revoke a key, rotate
the webhook secret, a phone-sized screen, dark mode, the keyboard, sign out. Then a batch asking
for markdown, whose results page shows a page's ``<script>`` as text, ready to copy.

Skipped when chromium or chromedriver is missing (``make e2e`` installs them).
"""

from __future__ import annotations

import csv
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from storage import ledger
from tests.conftest import ROOT, new_customer
from tests.support.waits import wait_until

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                       reason="chromium and chromium-driver are not installed (make e2e)"),
]
SHOTS = ROOT / "var" / "e2e-screenshots"
#: What a hostile URL in the history would do if it ran: change the page's title.
HOSTILE = ["https://example.com/<script>document.title='pwned'</script>",
           "https://example.com/\"><img src=x onerror=\"document.title='pwned'\">"]
URLS = 12


@pytest.fixture
def browser(tmp_path) -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--disable-gpu", "--no-first-run"):
        options.add_argument(argument)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {
        "download.default_directory": str(downloads), "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.downloads = downloads
    yield driver
    driver.quit()


class Steps:
    """Names each step and takes its screenshot; on a failure the screenshots stay."""

    def __init__(self, driver, name: str):
        self.driver, self.folder, self.count = driver, SHOTS / name, 0
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)

    def shot(self, label: str) -> None:
        self.count += 1
        self.driver.save_screenshot(str(self.folder / f"{self.count:02d}-{label}.png"))

    def done(self) -> None:
        if not os.environ.get("KEEP_SCREENSHOTS"):
            shutil.rmtree(self.folder, ignore_errors=True)


def until(check: Callable[[], object], what: str, timeout: float = 30) -> None:
    """Until ``check()`` is true; an element that is not there yet, or went stale as the page
    changed under it, counts as not yet."""
    from selenium.common.exceptions import WebDriverException

    def looked() -> bool:
        try:
            return bool(check())
        except WebDriverException:
            return False

    wait_until(looked, what, timeout=timeout)


def policy_violations(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"]]


def test_an_account_holder_walks_through_the_console(stack, service, site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    who = new_customer(stack.app, credits=100, plan="standard")
    db = stack.app.extensions["webdata.db"]
    for url in HOSTILE:
        ledger.record_failure(db, ledger.Charge(who.account_id, f"x:{uuid.uuid4()}", 0,
                                                "scrape", request_id=f"req_{uuid.uuid4().hex}",
                                                url=url), "fetch_failed")
    steps = Steps(browser, "walk-through")
    find = browser.find_element

    def appears(by: str, value: str) -> Any:
        """The element once the page that has it is loaded (a click that submits a form or
        follows a link returns before the next page is there)."""
        until(lambda: browser.find_elements(by, value), f"{value} on the next page")
        return find(by, value)

    # Sign in, with the keyboard only.
    browser.get(f"{service}/console/")
    assert browser.current_url.endswith("/console/sign-in")
    find(By.ID, "key").send_keys(who.key, Keys.ENTER)
    until(lambda: browser.current_url.endswith("/console/"), "the overview")
    assert find(By.ID, "balance").text == "100 credits"
    assert find(By.ID, "plan-name").text == "standard"
    until(lambda: find(By.ID, "usage-chart").get_attribute("data-drawn") == "yes",
          "the chart drawn by the vendored Chart.js")
    assert who.key not in str(browser.get_cookies())
    steps.shot("overview")

    # The history shows hostile URLs as text, and nothing of theirs runs.
    find(By.LINK_TEXT, "Activity").click()
    until(lambda: "Activity" in browser.title, "the activity page")
    shown = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "td.url")]
    assert set(HOSTILE) <= set(shown)
    assert "pwned" not in browser.title
    assert not browser.find_elements(By.CSS_SELECTOR, "td.url img, td.url script")
    steps.shot("activity")

    # Start a batch; its bar fills without a reload.
    find(By.LINK_TEXT, "Collections").click()
    urls = [f"{site}/slow/console{n}?ms=400" for n in range(URLS)]
    appears(By.ID, "urls").send_keys("\n".join(urls))
    find(By.CSS_SELECTOR, "#new-collection button[type=submit]").click()
    until(lambda: browser.find_elements(By.CSS_SELECTOR, ".collection"), "the collection")
    browser.execute_script("window.sameDocument = true;")
    item = find(By.CSS_SELECTOR, ".collection")
    bar = item.find_element(By.TAG_NAME, "progress")
    steps.shot("collection-started")
    seen: list[str] = []

    def complete() -> bool:
        seen.append(bar.get_attribute("value"))
        return item.find_element(By.CSS_SELECTOR, '[data-field="status"]').text == "completed"

    until(complete, "the collection to complete", timeout=120)
    assert browser.execute_script("return window.sameDocument === true;")  # no reload
    assert bar.get_attribute("value") == bar.get_attribute("max") == str(URLS)
    assert "100 %" in item.text and f"{URLS}/{URLS} pages" in item.text
    assert len({value for value in seen if value not in ("0", str(URLS))}) >= 1, seen
    assert not item.find_elements(By.CSS_SELECTOR, "form.cancel")  # nothing left to cancel
    steps.shot("collection-completed")

    # Download its CSV.
    item.find_element(By.LINK_TEXT, "CSV").click()
    until(lambda: [p for p in browser.downloads.glob("*.csv")], "the CSV download")
    with next(browser.downloads.glob("*.csv")).open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert sorted(row["url"] for row in rows) == sorted(urls)
    assert {row["status"] for row in rows} == {"succeeded"}

    # Start another batch and cancel it (after saying yes): nothing more is fetched.
    slow = [f"{site}/slow/cancel{n}?ms=1500" for n in range(URLS)]
    find(By.ID, "urls").send_keys("\n".join(slow))
    find(By.CSS_SELECTOR, "#new-collection button[type=submit]").click()
    until(lambda: len(browser.find_elements(By.CSS_SELECTOR, ".collection")) == 2,
          "the second collection")
    newest = find(By.CSS_SELECTOR, ".collection")
    newest.find_element(By.CSS_SELECTOR, "form.cancel button").click()
    browser.switch_to.alert.accept()
    until(lambda: "is cancelled" in find(By.CSS_SELECTOR, "main").text, "the cancel")
    status = find(By.CSS_SELECTOR, '.collection [data-field="status"]')
    assert status.text == "cancelled"
    assert who.balance() == 100 - URLS - int(find(
        By.CSS_SELECTOR, '.collection [data-field="credits_used"]').text)
    steps.shot("collection-cancelled")

    # Create a key (shown once), use it, revoke it.
    find(By.LINK_TEXT, "Keys & webhooks").click()
    appears(By.ID, "create-key").click()
    new_key = appears(By.ID, "new-key").get_attribute("value")
    assert new_key.startswith("wdp_")
    api = f"{service}/api/service/v1/account"
    assert requests.get(api, headers={"Authorization": f"Bearer {new_key}"},
                        timeout=10).status_code == 200
    copy = find(By.CSS_SELECTOR, 'button.copy[data-copy="new-key"]')
    copy.click()
    until(lambda: copy.text == "Copied", "the copy button to answer")
    steps.shot("key-created")
    row = find(By.CSS_SELECTOR, f'tr[data-prefix="{new_key[:12]}"]')
    row.find_element(By.CSS_SELECTOR, "button.danger").click()
    prompt = browser.switch_to.alert  # revoking asks first
    assert prompt.text.startswith(f"Revoke {new_key[:12]}") and "401" in prompt.text
    prompt.accept()
    until(lambda: "revoked" in find(By.CSS_SELECTOR, f'tr[data-prefix="{new_key[:12]}"]').text,
          "the key revoked")
    assert requests.get(api, headers={"Authorization": f"Bearer {new_key}"},
                        timeout=10).status_code == 401
    appears(By.ID, "rotate-secret").click()
    assert appears(By.ID, "new-secret").get_attribute("value").startswith("whsec_")
    steps.shot("keys")

    # A phone-sized screen in dark mode: one column, nothing wider than the screen.
    browser.set_window_size(390, 844)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    for page in ("/console/", "/console/collections", "/console/activity"):
        browser.get(f"{service}{page}")
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth;"), page
    background = browser.execute_script(
        "return getComputedStyle(document.body).backgroundColor;")
    assert background == "rgb(18, 20, 23)"  # the dark palette
    steps.shot("phone-dark")
    browser.set_window_size(1280, 900)

    # The first Tab reaches the skip link; sign out ends the session.
    browser.get(f"{service}/console/")
    find(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    find(By.CSS_SELECTOR, ".sign-out button").click()
    until(lambda: browser.current_url.endswith("/console/sign-in"), "the sign-in page")
    browser.get(f"{service}/console/keys")
    assert browser.current_url.endswith("/console/sign-in")
    steps.shot("signed-out")
    assert policy_violations(browser) == []
    steps.done()


def test_a_collection_of_markdown_shows_it_as_text_ready_to_copy(stack, service, site, browser):
    """The page options of the form (shown for extract page only), a refused selector named
    next to its field, then the results page: the markdown of a page that writes about
    ``<script>`` shown as text, nothing of it run, one click to copy it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    who = new_customer(stack.app, credits=20, plan="standard")
    steps = Steps(browser, "formats")
    find = browser.find_element
    browser.get(f"{service}/console/")
    find(By.ID, "key").send_keys(who.key, Keys.ENTER)
    until(lambda: browser.current_url.endswith("/console/"), "the overview")
    browser.get(f"{service}/console/collections")

    options = find(By.ID, "page-options")
    assert options.is_displayed()
    Select(find(By.ID, "extract")).select_by_value("contacts")
    assert not options.is_displayed()  # not options of extract contacts
    Select(find(By.ID, "extract")).select_by_value("page")
    assert options.is_displayed()
    ticked = [box.get_attribute("value") for box in browser.find_elements(
        By.CSS_SELECTOR, 'input[name="formats"]') if box.is_selected()]
    assert ticked == ["text"]

    def fill(selector: str) -> None:
        find(By.ID, "urls").send_keys(f"{site}/escaping")
        find(By.CSS_SELECTOR, 'input[name="formats"][value="text"]').click()  # untick
        find(By.CSS_SELECTOR, 'input[name="formats"][value="markdown"]').click()
        find(By.ID, "exclude_selectors").send_keys(selector)
        find(By.CSS_SELECTOR, "#new-collection button[type=submit]").click()

    fill("footer\ndiv[")
    until(lambda: find(By.CSS_SELECTOR, "#exclude_selectors + .problem").is_displayed(),
          "the selector's problem next to its field")
    assert find(By.CSS_SELECTOR, "#exclude_selectors + .problem").text.startswith(
        "div[: Not a valid CSS selector")
    steps.shot("refused-selector")
    assert who.balance() == 20 and not browser.find_elements(By.CSS_SELECTOR, ".collection")

    browser.get(f"{service}/console/collections")
    fill("footer")
    until(lambda: browser.find_elements(By.CSS_SELECTOR, ".collection"), "the collection")
    item = find(By.CSS_SELECTOR, ".collection")
    until(lambda: item.find_element(By.CSS_SELECTOR, '[data-field="status"]').text
          == "completed", "the collection to complete", timeout=120)
    item.find_element(By.LINK_TEXT, "Results").click()
    until(lambda: browser.find_elements(By.CSS_SELECTOR, "pre.content"), "the results")
    blocks = browser.find_elements(By.CSS_SELECTOR, "pre.content")
    assert [block.get_attribute("data-format") for block in blocks] == ["markdown"]
    markdown = blocks[0].text
    assert markdown.startswith("# Escaping in templates")
    assert "<script>document.title = 'pwned'</script>" in markdown
    assert "Notes on web security" not in markdown  # the footer was excluded
    assert browser.title.startswith("Results of") and "pwned" not in browser.title
    assert not browser.find_elements(By.CSS_SELECTOR, "pre script, pre img, pre code")
    steps.shot("results")

    copy = find(By.CSS_SELECTOR, "button.copy")
    copy.click()
    until(lambda: copy.text == "Copied", "the copy button to answer")
    assert browser.execute_script("return window.getSelection().toString();").strip() == (
        markdown.strip())

    browser.set_window_size(390, 844)  # a phone: the text wraps, nothing wider than it
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth;"), \
        browser.execute_script(
            "return [...document.querySelectorAll('main *')].filter("
            "e => e.getBoundingClientRect().right > window.innerWidth)"
            ".map(e => e.tagName + '.' + e.className).slice(0, 5);")
    steps.shot("results-phone")
    browser.set_window_size(1280, 900)
    assert policy_violations(browser) == []
    steps.done()
