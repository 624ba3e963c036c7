"""A spider with a bug, to check what a crash in extraction becomes (tests/test_worker.py).

Batch code may pass a spider class to ``worker.jobs.run_single_page``; the worker imports this
module by name when it unpickles the job (its working directory is the repository).
"""

from __future__ import annotations

from typing import Any

from scrapy.http import HtmlResponse

from crawler.spiders.operations import spider_class

PageSpider = spider_class("page")


class BuggyPageSpider(PageSpider):
    """The page spider, whose extraction then trips over a bug of ours (a KeyError)."""

    name = "buggy_page"

    def extract(self, response: HtmlResponse) -> dict[str, Any]:
        return super().extract(response)["no such field"]
