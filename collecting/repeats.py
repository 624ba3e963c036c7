"""Which blocks a crawl's pages repeat: a count of pages per block fingerprint, in Redis beside
the frontier, shared by every slice of the crawl on every machine.

A block is *repeated* once it is on at least :data:`MIN_PAGES` pages and on at least
:data:`SHARE` of the pages counted so far (docs/design.md, Repeated blocks). Each page is
counted as it is stored; its repeated blocks, as known then, are removed before it is stored,
and when the crawl completes the pages stored before a block was recognised are cleaned too
(:func:`clean_stored`). Memory is bounded: every block of the first :data:`SAMPLE` pages is
counted, later pages only add to the blocks already counted (a block new after the sample is
content, not a template's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from typing import Any

from redis import Redis

from collecting.frontier import Frontier
from crawler.extract.repeated import page_units, without_repeated
from storage import collection_results
from storage.db import Database

#: A block on at least this share of the pages counted is repeated…
SHARE = 0.5
#: …and on at least this many pages.
MIN_PAGES = 4
#: Pages whose every block is counted; later pages only count blocks already known.
SAMPLE = 200
#: The hash field that counts the pages (a fingerprint is 16 hex digits: never this).
PAGES = "#pages"

_COUNT = """
-- KEYS: the blocks hash; ARGV: sample, then per page: its count of fingerprints, them
local sample = tonumber(ARGV[1])
local out = {}
local i = 2
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  local pages = redis.call('HINCRBY', KEYS[1], '#pages', 1)
  for j = i + 1, i + n do
    if pages <= sample or redis.call('HEXISTS', KEYS[1], ARGV[j]) == 1 then
      redis.call('HINCRBY', KEYS[1], ARGV[j], 1)
    end
  end
  i = i + n + 1
end
local counts = redis.call('HGETALL', KEYS[1])
return counts
"""


def threshold(pages: int) -> int:
    """Pages a block must be on to be repeated, of ``pages`` counted."""
    return max(MIN_PAGES, math.ceil(SHARE * pages))


class RepeatedBlocks:
    """The block counts of one crawl (the key ``blocks`` of its frontier)."""

    def __init__(self, redis: Redis, frontier: Frontier):
        self.redis = redis
        self.key = frontier.keys["blocks"]
        self._count = redis.register_script(_COUNT)

    def count(self, pages: Sequence[set[str]]) -> set[str]:
        """Count ``pages`` (each its set of fingerprints); the repeated fingerprints now."""
        args: list[Any] = [SAMPLE]
        for units in pages:
            args += [len(units), *units]
        flat = self._count(keys=[self.key], args=args) if pages else []
        return _repeated(flat)

    def repeated(self) -> set[str]:
        """The repeated fingerprints, as counted so far."""
        flat: list[Any] = []
        for field, value in self.redis.hgetall(self.key).items():
            flat += [field, value]
        return _repeated(flat)


def _repeated(flat: list[Any]) -> set[str]:
    counts = {_text(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}
    least = threshold(counts.pop(PAGES, 0))
    return {fingerprint for fingerprint, count in counts.items() if count >= least}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def clean_outcomes(blocks: RepeatedBlocks, datas: Sequence[Any]) -> list[Any]:
    """Count the pages' ``data`` (None for a failed page) and return each without the blocks
    repeated by then."""
    counted = [page_units(data) for data in datas if data]
    repeated = blocks.count(counted)
    return [without_repeated(data, repeated) for data in datas]


def clean_stored(db: Database, collection_id: str, repeated: Set[str], batch: int = 200
                 ) -> int:
    """Remove ``repeated`` blocks from the results stored before they were recognised; how
    many results changed. In batches, in the order the results were stored."""
    changed = 0
    after = 0
    while repeated:
        rows, _ = collection_results.page(db, collection_id, after=after, limit=batch)
        if not rows:
            break
        updates = {}
        for row in rows:
            data = collection_results.data_of(row)
            cleaned = without_repeated(data, repeated)
            if cleaned is not data:
                updates[row.seq] = cleaned
        if updates:
            collection_results.rewrite_data(db, collection_id, updates)
            changed += len(updates)
        after = rows[-1].seq
    return changed
