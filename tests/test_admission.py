"""What a crawl knows would refuse a link before fetching it (``crawler.admission``): the
source policy from the URL alone, and robots.txt of the page's own site once read."""

from __future__ import annotations

import threading

from scrapy.robotstxt import ProtegoRobotParser
from scrapy.settings import Settings

from collecting.frontier import sort_links
from core.contract import SkipReason
from core.policy import SourcePolicy
from core.scope import CrawlScope
from crawler import middlewares
from crawler.admission import KnownRefusals, known_refusals
from crawler.runner import crawler_settings

ROBOTS = b"User-agent: *\nDisallow: /private/\nDisallow: /*?print=\n"


def parser(body: bytes = ROBOTS) -> ProtegoRobotParser:
    return ProtegoRobotParser(body, None)


def refusals(robots: ProtegoRobotParser | None = None) -> KnownRefusals:
    return KnownRefusals(SourcePolicy.from_lists("", "80,443", "blocked.example"),
                         "https://www.example.com", robots, "webdata")


def test_robots_of_the_site_read_refuses_what_it_disallows():
    known = refusals(parser())
    assert known("https://www.example.com/private/x") == SkipReason.ROBOTS
    assert known("https://www.example.com/a?print=1") == SkipReason.ROBOTS
    assert known("https://www.example.com/a") is None
    # robots.txt is per scheme and host: another one's file is not known
    assert known("https://example.com/private/x") is None
    assert known("http://www.example.com/private/x") is None
    assert refusals(None)("https://www.example.com/private/x") is None  # none read yet


def test_the_policy_refuses_from_the_url_alone():
    known = refusals(parser())
    assert known("https://www.example.com:25/") == SkipReason.POLICY  # a port not allowed
    assert known("https://shop.blocked.example/") == SkipReason.POLICY
    assert known("http://10.0.0.1/private/") == SkipReason.POLICY  # policy before robots


def test_a_page_s_refusals_come_from_the_process_s_robots_cache():
    """The parser the middleware cached for the page's own site, asked from another thread
    as a collection's slice does."""
    settings = crawler_settings()
    site = "https://cached.example"
    middlewares._robots_cache.put(site, parser(), ttl=60)
    known = known_refusals(f"{site}/page", settings)
    answers: list[SkipReason | None] = []
    thread = threading.Thread(target=lambda: answers.append(known(f"{site}/private/a")))
    thread.start()
    thread.join()
    assert answers == [SkipReason.ROBOTS]
    assert known_refusals("https://unread.example/", Settings(settings)).robots is None


def test_a_crawl_skips_before_admission_what_is_refused():
    scope = CrawlScope("https://www.example.com/", max_depth=1)
    links = ["https://www.example.com/a", "https://www.example.com/private/b",
             "https://example.com/private/c", "https://www.example.com:8443/"]
    followed, refused = sort_links(scope, links, 1, refusals(parser()))
    assert [e.url for e in followed] == ["https://www.example.com/a",
                                         "https://example.com/private/c"]  # refused at fetch
    assert [(s.url, s.reason) for s in refused] == [
        ("https://www.example.com/private/b", "robots"),
        ("https://www.example.com:8443/", "off_site")]
