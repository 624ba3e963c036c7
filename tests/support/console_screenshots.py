"""Make the two console screenshots of docs/console.md (``api/console/screenshots/``) from a
real run.

    .venv/bin/python -m tests.support.console_screenshots

A private stack as the browser tests start it (Redis, two warm workers, SQLite, the loopback
test site, the API on a loopback port), an account with 30 days of requests billed through the
ledger (then dated back, so the chart has history to show), and headless Chromium: the
overview, then a batch of slow pages caught while it runs.
"""

from __future__ import annotations

import random
import tempfile
import uuid
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from sqlalchemy import update

from storage import ledger
from storage.db import migrate
from storage.models import Activity, LedgerEntry, utcnow
from tests.conftest import ROOT, SITE_HOST, new_customer
from tests.support.collection_stack import Stack, served
from tests.support.site.server import serve
from tests.support.waits import wait_until
from tests.test_console_browser import CHROMEDRIVER, CHROMIUM

OUT = ROOT / "api" / "console" / "screenshots"
#: Requests a day per operation, roughly (operation, credits each, requests on a busy day).
MIX = [("scrape", 1, 40), ("contacts", 1, 12), ("products", 1, 9), ("video_platform", 1, 4),
       ("search", 5, 6), ("collection", 1, 60)]


def billed_history(app, account_id: str) -> None:
    """Requests over the last 30 days, each reserved and captured (or released) by the ledger
    as the API does, then moved to its day."""
    db, chance = app.extensions["webdata.db"], random.Random(14)
    today = utcnow().date()
    for back in range(29, -1, -1):
        busy = 0.4 + 0.6 * (1 - back / 30) + chance.uniform(-0.2, 0.2)
        for operation, cost, most in MIX:
            for _ in range(int(most * busy * chance.uniform(0.3, 1.0))):
                key = f"request:{uuid.uuid4().hex}"
                charge = ledger.Charge(account_id, key, cost, operation,
                                       request_id=f"req_{uuid.uuid4().hex[:24]}",
                                       url="https://example.com/")
                ledger.reserve(db, charge)
                if chance.random() < 0.06:
                    ledger.release(db, charge, "fetch_failed")
                else:
                    ledger.capture(db, charge)
                at = datetime.combine(today - timedelta(days=back),
                                      time(chance.randrange(24), chance.randrange(60)),
                                      tzinfo=UTC)
                with db.write() as session:
                    session.execute(update(Activity).where(
                        Activity.request_id == charge.request_id).values(at=at))
                    session.execute(update(LedgerEntry).where(
                        LedgerEntry.charge_key == key).values(created_at=at))


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="console-shots-"))
    database_url = f"sqlite:///{tmp / 'shots.db'}"
    migrate(database_url)
    site_server = serve(SITE_HOST, 0)
    site = f"http://{SITE_HOST}:{site_server.server_address[1]}"
    stack = Stack(tmp, database_url, site)
    try:
        who = new_customer(stack.app, credits=25_000, plan="standard")
        billed_history(stack.app, who.account_id)
        with served(stack.app) as base:
            shoot(base, site, who.key)
    finally:
        stack.close()
        site_server.shutdown()
        site_server.server_close()
    print(f"Saved {OUT / 'overview.png'} and {OUT / 'collections.png'}.")


def shoot(base: str, site: str, key: str) -> None:
    """Sign in at ``base``, take the overview, start a batch, take it a third done."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--window-size=1200,1000",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        OUT.mkdir(parents=True, exist_ok=True)
        driver.get(f"{base}/console/sign-in")
        driver.find_element(By.ID, "key").send_keys(key)
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-drawn=yes]"),
                   "the chart")
        driver.save_screenshot(str(OUT / "overview.png"))
        driver.get(f"{base}/console/collections")
        urls = "\n".join(f"{site}/slow/shot{n}?ms=700" for n in range(60))
        driver.find_element(By.ID, "urls").send_keys(urls)
        driver.find_element(By.CSS_SELECTOR, "#new-collection button[type=submit]").click()
        bar = driver.find_element(By.CSS_SELECTOR, ".collection progress")
        wait_until(lambda: int(bar.get_attribute("value") or 0) >= 25, "a third done", 120)
        driver.execute_script("document.getElementById('list-title').scrollIntoView();")
        driver.save_screenshot(str(OUT / "collections.png"))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
