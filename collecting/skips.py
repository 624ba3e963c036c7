"""The skips a collection can only know at its end: the URLs it admitted and will never fetch.
Past ``max_pages`` with no duplicate's freed slot to reach them (``limit``), or waiting when
it stopped early, cancelled or out of credits (``cancelled``). The others are decided as links
are admitted (:meth:`collecting.frontier.Frontier.decide`, in :mod:`collecting.slice`'s
flush)."""

from __future__ import annotations

from collecting.frontier import Frontier
from core.config import Config
from storage import collection_skips
from storage.db import Database, shared_for
from worker import queues

#: Entries taken from the frontier, and recorded, at a time.
BATCH = 1000


def record_left(db: Database, frontier: Frontier, collection_id: str,
                batches: int | None = None) -> bool:
    """With nothing more to be fetched (the frontier idle, or the collection stopped): record
    every entry left as a skip, a batch per transaction, at most ``batches`` of them (None:
    all); whether none is left. Each entry is taken from Redis once, so two processes ending
    it at once record it once."""
    done = 0
    while batches is None or done < batches:
        skipped = frontier.drain(BATCH)
        if not skipped:
            return True
        collection_skips.record_left(db, collection_id, skipped)
        done += 1
    return not frontier.left()


def record_rest(collection_id: str) -> None:
    """The maintenance job that records what a cancel left past the batches it recorded
    itself (a crawl may hold any number of URLs past ``max_pages``: the request that cancels
    does not wait for them all)."""
    config = Config.from_env()
    redis = queues.redis_connection(config.storage.redis_url, config.storage.redis_timeout)
    record_left(shared_for(config.storage), Frontier(redis, collection_id), collection_id)
