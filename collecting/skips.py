"""The skips a crawl can only know at its end: the URLs admitted past ``max_pages`` that no
duplicate's freed slot ever reached (``limit``). The others are decided as links are admitted
(:meth:`collecting.frontier.Frontier.decide`, in :mod:`collecting.slice`'s flush)."""

from __future__ import annotations

from collecting.frontier import Frontier
from storage import collections
from storage.db import Database

#: Entries taken from the overflow, and recorded, at a time.
BATCH = 1000


def record_limit(db: Database, frontier: Frontier, collection_id: str) -> int:
    """With the frontier idle (nothing will free a slot any more): record every entry left
    past the budget as a ``limit`` skip, a batch per transaction; how many. Each entry is
    taken from Redis once, so two slices finishing at once record it once."""
    recorded = 0
    while True:
        skipped = frontier.drain_overflow(BATCH)
        if not skipped:
            return recorded
        if collections.store(db, collection_id, [], skipped).closed:
            return recorded
        recorded += len(skipped)
