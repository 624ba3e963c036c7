"""What a crawl knows, before fetching a URL, would refuse it: the source policy (from the URL
alone) and the robots.txt of a site whose file the process has read.

A crawl asks this of every link it would follow, before the link is admitted
(:func:`collecting.frontier.sort_links`): a link robots.txt disallows, or the policy refuses,
is a skip (``robots``, ``policy``) and never takes a place of ``max_pages``. What is only known
at fetch time (a name that resolves to a refused address, a site whose robots.txt was not read
yet) is refused there, and the page gives its place back
(:meth:`~collecting.frontier.Frontier.release_slot`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.contract import SkipReason
from core.policy import PolicyRefusal
from crawler.middlewares import cached_robots, robots_site
from crawler.resolver import policy_from_settings

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser

    from core.policy import SourcePolicy


@dataclass(frozen=True)
class KnownRefusals:
    """``policy``, and robots.txt of the one site (``scheme://netloc``) ``robots`` was read
    for (None: not read). A pure reader once made: another thread (a collection's slice) may
    call it while the reactor goes on."""

    policy: SourcePolicy
    site: str
    robots: RobotParser | None
    user_agent: str

    def __call__(self, url: str) -> SkipReason | None:
        """Why ``url`` would be refused (``policy``, ``robots``); None when nothing known
        refuses it."""
        try:
            self.policy.check_url(url)
        except PolicyRefusal:
            return SkipReason.POLICY
        if self.robots is None or robots_site(url) != self.site:
            return None
        return None if self.robots.allowed(url, self.user_agent) else SkipReason.ROBOTS


def known_refusals(url: str, settings: Any) -> KnownRefusals:
    """The refusals known for links found on page ``url`` with the crawler's ``settings``:
    the policy, and robots.txt of ``url``'s own site when this process has it."""
    return KnownRefusals(policy_from_settings(settings), robots_site(url), cached_robots(url),
                         robots_user_agent(settings))


def robots_user_agent(settings: Any) -> str:
    """The user agent whose robots.txt rules apply (Scrapy's ``ROBOTSTXT_USER_AGENT``, else
    ``USER_AGENT``)."""
    return settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT")

