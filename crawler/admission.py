"""Which URLs a crawl in one process fetches: the frontier's rules, kept in memory.

``scrapy crawl site`` and ``scrapy crawl batch`` must store what ``POST /collections`` stores
for the same request. The workers keep a collection's frontier in Redis
(:class:`collecting.frontier.Frontier`, atomic Lua steps shared by every process); a spider run
from the command line has one process and needs no Redis, so :class:`Admission` applies the
same three rules to plain Python containers:

- **admission**: a URL enters once, by its canonical form (the entry's ``key``, from
  :func:`core.canonical.canonical_url`), and only while the page budget (``max_pages``)
  lasts; a URL seen after that waits in line (the overflow), admitted but not fetched;
- **claims**: after a fetch, a page claims its final URL and ``rel=canonical``; a page whose
  address an earlier page claimed is a duplicate, and its budget slot goes to the next URL in
  line, so duplicates never make a crawl store fewer pages than it could;
- **the queue**: admitted entries wait in :meth:`Admission.take` order (first admitted, first
  fetched), so the start URL is fetched first.

Scrapy's own dupefilter cannot do this: it fingerprints requests (method, URL with its
tracking parameters, body), not pages, and knows nothing of budgets or redirects.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable

from collecting.frontier import Entry

logger = logging.getLogger(__name__)


class Admission:
    """The frontier of one crawl in one process (see the module).

    ``budget`` is the most pages the crawl may store (``max_pages``); 0 means no limit.
    """

    def __init__(self, budget: int = 0):
        self.budget = budget
        #: Entries that took a budget slot (duplicates give theirs back).
        self.admitted = 0
        #: Pages recognised as duplicates after their fetch.
        self.duplicates = 0
        self._seen: set[str] = set()
        self._queue: deque[Entry] = deque()
        self._overflow: deque[Entry] = deque()
        self._claims: dict[str, str] = {}

    def admit(self, entries: Iterable[Entry]) -> int:
        """Queue the entries not seen before while the budget lasts (the others seen before
        wait in line); how many were queued now."""
        new = 0
        for entry in entries:
            if entry.key in self._seen:
                continue
            self._seen.add(entry.key)
            if not self.budget or self.admitted < self.budget:
                self._queue.append(entry)
                self.admitted += 1
                new += 1
            else:
                self._overflow.append(entry)
        return new

    def take(self) -> list[Entry]:
        """Every entry queued and not taken yet, in admission order."""
        taken = list(self._queue)
        self._queue.clear()
        return taken

    def claim(self, entry: Entry, addresses: Iterable[str]) -> str | None:
        """Claim ``addresses`` (canonical URLs: the page's final URL, its ``rel=canonical``)
        for ``entry``; the key of the page that owns one of them already (``entry`` is a
        duplicate of it: its slot goes to the next URL in line), or None."""
        own = entry.key
        addresses = [own, *dict.fromkeys(a for a in addresses if a != own)]
        for address in addresses:
            owner = self._claims.get(address)
            if owner is not None and owner != own:
                self.duplicates += 1
                if self._overflow:
                    self._queue.append(self._overflow.popleft())
                else:
                    self.admitted -= 1
                return owner
        for address in addresses:
            self._claims[address] = own
        return None
