"""The long-lived crawler every single-page job is fed to (``crawler.feed``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from crawler.feed import takes
from crawler.spiders.base import SinglePageSpider
from crawler.spiders.operations import spider_class
from crawler.spiders.video import VideoSpider
from tests.conftest import ROOT, WORKER_ENV
from tests.support.fakes.spiders import BuggyPageSpider

PageSpider = spider_class("page")

#: Run in a process of its own (one reactor per process): jobs of several kinds at once, one
#: over its budget, then what the warm crawler holds afterwards.
SCRIPT = r"""
import contextvars, json, sys, threading
from crawler.exceptions import CrawlTimeout
from crawler.middlewares import SharedRobotsTxtMiddleware
from crawler.runner import WarmCrawler, _call_in_reactor

site = sys.argv[1]
warm = WarmCrawler()
warm.start()
outcomes = {}

def run(name, spider, url, **options):
    try:
        items = warm.crawl(spider, url=url, **options)
        outcomes[name] = [getattr(item, "status", None) for item in items]
    except CrawlTimeout:
        outcomes[name] = "timeout"

jobs = [threading.Thread(target=run, args=(f"page{n}", "page", f"{site}/article?{n}"))
        for n in range(8)]
jobs.append(threading.Thread(target=run, args=("missing", "page", f"{site}/missing")))
jobs.append(threading.Thread(target=run, args=("not-a-video", "video", "https://example.com/")))
jobs.append(threading.Thread(target=run, args=("dripping", "page", f"{site}/drip"),
                             kwargs={"timeout": 1}))
for job in jobs:
    job.start()
for job in jobs:
    job.join()
from twisted.internet import reactor
from twisted.internet.threads import blockingCallFromThread
# read in the reactor thread, after the calls the jobs queued there (a give-up is one)
jobs_left = blockingCallFromThread(reactor, lambda: len(warm._feed._jobs))
# what a job thread hands the reactor runs without its context (RQ's current job in a worker)
current, seen = contextvars.ContextVar("current"), []
def job_thread():
    current.set("a job")
    _call_in_reactor(lambda: seen.append(current.get(None)))
thread = threading.Thread(target=job_thread)
thread.start()
thread.join()
blockingCallFromThread(reactor, lambda: None)
(feed,) = warm._runner.crawlers
robots = [m for m in feed.engine.downloader.middleware.middlewares
          if isinstance(m, SharedRobotsTxtMiddleware)]
print(json.dumps({"outcomes": outcomes, "crawlers": len(warm._runner.crawlers),
                  "spider": feed.spider.name, "jobs_left": jobs_left,
                  "robots_parsers_left": len(robots[0]._parsers), "job_context": seen}))
warm.stop()
"""


def test_single_page_spiders_are_fed_and_spiders_with_crawl_settings_are_not():
    assert takes(PageSpider) and takes(VideoSpider) and takes(BuggyPageSpider)

    class OwnStatuses(PageSpider):
        handle_httpstatus_list = [404]

    class OwnSettings(PageSpider):
        custom_settings = {"DOWNLOAD_DELAY": 1}

    assert not takes(OwnStatuses) and not takes(OwnSettings)
    assert issubclass(OwnStatuses, SinglePageSpider)


def test_every_job_runs_in_one_long_lived_crawler_that_keeps_nothing_per_job(site):
    done = subprocess.run([sys.executable, "-c", SCRIPT, site], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **WORKER_ENV})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    outcomes = report.pop("outcomes")
    assert {outcomes[f"page{n}"][0] for n in range(8)} == {"succeeded"}
    assert outcomes["missing"] == ["failed"]  # a 404: a failed result, as in a crawl of its own
    assert outcomes["not-a-video"] == ["failed"]  # an item straight from start()
    assert outcomes["dripping"] == "timeout"  # given up on alone; the others finished
    # One crawler for all eleven jobs, and no job (nor any site's robots.txt) left in it; nor a
    # job thread's context in what it handed the reactor (its timers would keep it, the job too).
    assert report == {"crawlers": 1, "spider": "feed", "jobs_left": 0, "robots_parsers_left": 0,
                      "job_context": [None]}
