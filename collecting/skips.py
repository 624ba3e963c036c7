"""The skips a collection can only know at its end: the URLs it admitted and will never fetch.
Past ``max_pages`` with no duplicate's freed slot to reach them (``limit``), or waiting when
it stopped early, cancelled or out of credits (``cancelled``). The others are decided as links
are admitted (:meth:`collecting.frontier.Frontier.decide`, in :mod:`collecting.slice`'s
flush)."""

from __future__ import annotations

from collecting.frontier import Frontier
from storage import collection_skips
from storage.db import Database

#: Entries taken from the frontier, and recorded, at a time.
BATCH = 1000


def record_left(db: Database, frontier: Frontier, collection_id: str) -> int:
    """With nothing more to be fetched (the frontier idle, or the collection stopped): record
    every entry left as a skip, a batch per transaction; how many. Each entry is taken from
    Redis once, so two processes ending it at once record it once."""
    recorded = 0
    while True:
        skipped = frontier.drain(BATCH)
        if not skipped:
            return recorded
        recorded += collection_skips.record_left(db, collection_id, skipped)
