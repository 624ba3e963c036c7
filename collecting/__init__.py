"""Collections: a batch of URLs or a crawl of one site, run in the background (docs/api.md,
Collections), and ``scrapy crawl site|batch``, which run them by hand on the same rules.

Why a top-level package, and this name: three kinds of process use it, and it can live under
none of them. The API starts and cancels collections (it must not import the crawler), the
workers run their slices (on the warm crawler), and ``scrapy crawl site|batch`` takes its
pages from the same frontier (the crawler must not import ``worker`` or ``api``). Not
``collections``: that would shadow the standard library's.

Its modules, and who imports them:

- crawler-free, for every process (the API among them: ``tests/test_core_imports.py``
  checks these load neither Scrapy nor Twisted nor :mod:`crawler`):
  :mod:`~collecting.frontier` (the rules: admission, page budget, claims, leases, the queue;
  its steps in Lua on Redis, :mod:`~collecting.frontier_lua`), :mod:`~collecting.skips` (the
  URLs a collection admitted and will never fetch: past ``max_pages``, or left by a stop),
  :mod:`~collecting.private_redis` (the Redis of a ``scrapy crawl`` run by hand),
  :mod:`~collecting.host_gate` (politeness across workers),
  :mod:`~collecting.start` (plan limits, the row, the first slice),
  :mod:`~collecting.control` (slice jobs, cancel, finish, the watchdog),
  :mod:`~collecting.python_api` (collections from batch code: ``run_collection``),
  :mod:`~collecting.changes` (change tracking: each page against its previous version);
- on the warm crawler, for the workers only: :mod:`~collecting.slice` (the run loop of one
  slice job), :mod:`~collecting.landing` (a page done: its outcome or a skip, its links
  sorted), :mod:`~collecting.page_cache` (pages from the page cache, with ``max_age``),
  :mod:`~collecting.seeding` (a batch's URLs, a crawl's start URL and sitemaps) and
  :mod:`~collecting.repeats` (the blocks a crawl's pages repeat).
"""
