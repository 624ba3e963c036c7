"""``python -m tests.support.fakes.map_worker QUEUE…``: the scripted-DNS warm worker
(:mod:`tests.support.fakes.resolver`, its script in ``SCRIPTED_DNS``) whose maps read at most
``MAP_MAX_LOCS`` sitemap entries in all.

The cap is :data:`crawler.spiders.map.MAX_LOCS` (1,000,000 in production); generating and
parsing a million entries would take a test minutes, so this worker lowers the constant, and
the cap's code path (count, stop, ``truncated``) is the production one.
"""

from __future__ import annotations

import os

#: Environment variable holding the worker's cap on sitemap entries.
MAX_LOCS_ENV = "MAP_MAX_LOCS"


def main() -> None:
    import crawler.spiders.map as map_spider  # installs no reactor: the resolver's main does
    from tests.support.fakes import resolver

    map_spider.MAX_LOCS = int(os.environ[MAX_LOCS_ENV])
    resolver.main()


if __name__ == "__main__":
    main()
