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
import time
from collections.abc import Iterable, Mapping, Sequence, Set
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
#: Pages counted before a page is cleaned as it is stored: the first pages of a crawl are
#: cleaned when it completes, from its final counts (a block on 3 of the first 5 pages may be
#: on 3 of 500; measured in docs/benchmarks.md, Repeated blocks).
WARMUP = 20
#: Pages whose every block is counted; later pages only count blocks already known.
SAMPLE = 200
#: The frontier's meta field of the position the end of the crawl has cleaned up to.
CLEANED = "blocks_cleaned"
#: Seconds a slice spends cleaning stored results before it hands over to the next slice.
CLEAN_SECONDS = 30.0
#: The hash field that counts the pages (a fingerprint is 16 hex digits: never this).
PAGES = "#pages"

_COUNT = """
-- KEYS: the blocks hash; ARGV: sample, then per page: its count of fingerprints, them
-- (count_pages is this script in Python: keep the two the same). Answers the pages counted
-- and the count of each fingerprint of these pages (not the whole hash: only these are
-- cleaned now)
local sample = tonumber(ARGV[1])
local counted = {}
local pages = 0
local i = 2
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  pages = redis.call('HINCRBY', KEYS[1], '#pages', 1)
  for j = i + 1, i + n do
    if pages <= sample or redis.call('HEXISTS', KEYS[1], ARGV[j]) == 1 then
      counted[ARGV[j]] = redis.call('HINCRBY', KEYS[1], ARGV[j], 1)
    end
  end
  i = i + n + 1
end
local out = {'#pages', pages}
for fingerprint, count in pairs(counted) do
  out[#out + 1] = fingerprint
  out[#out + 1] = count
end
return out
"""


def threshold(pages: int, share: float = SHARE, min_pages: int = MIN_PAGES) -> int:
    """Pages a block must be on to be repeated, of ``pages`` counted."""
    return max(min_pages, math.ceil(share * pages))


def count_pages(counts: dict[str, int], pages: Iterable[Set[str]], sample: int = SAMPLE
                ) -> None:
    """Add ``pages`` (each its set of fingerprints) to ``counts`` (fingerprint → pages, and
    :data:`PAGES` → pages counted) as the Redis script does: every block of the first
    ``sample`` pages, after them only the blocks already counted. The script's twin, for
    what runs without Redis (bench/repeated_blocks.py; a test holds the two the same)."""
    for units in pages:
        counts[PAGES] = counted = counts.get(PAGES, 0) + 1
        for unit in units:
            if counted <= sample or unit in counts:
                counts[unit] = counts.get(unit, 0) + 1


def repeated_in(counts: Mapping[str, int], share: float = SHARE, min_pages: int = MIN_PAGES,
                warmup: int = 0) -> set[str]:
    """The repeated fingerprints of ``counts`` (as :func:`count_pages` keeps them); none
    before ``warmup`` pages are counted (:data:`WARMUP`, at store time)."""
    if counts.get(PAGES, 0) < warmup:
        return set()
    least = threshold(counts.get(PAGES, 0), share, min_pages)
    return {unit for unit, count in counts.items() if unit != PAGES and count >= least}


class RepeatedBlocks:
    """The block counts of one crawl (the key ``blocks`` of its frontier)."""

    def __init__(self, redis: Redis, frontier: Frontier):
        self.redis = redis
        self.key = frontier.keys["blocks"]
        self.meta = frontier.keys["meta"]
        self._count = redis.register_script(_COUNT)

    def count(self, pages: Sequence[set[str]]) -> set[str]:
        """Count ``pages`` (each its set of fingerprints); those of their fingerprints that
        are repeated now (the ones to clean from them as they are stored)."""
        args: list[Any] = [SAMPLE]
        for units in pages:
            args += [len(units), *units]
        flat = self._count(keys=[self.key], args=args) if pages else []
        return _repeated(flat, WARMUP)

    def cleaned_up_to(self) -> int:
        """The position up to which the end of the crawl has cleaned its stored results."""
        return int(self.redis.hget(self.meta, CLEANED) or 0)

    def clean_from(self, position: int) -> None:
        self.redis.hset(self.meta, CLEANED, position)

    def clean_some(self, db: Database, collection_id: str, seconds: float = CLEAN_SECONDS
                   ) -> bool:
        """At the end of the crawl: clean the results stored before their blocks were known,
        for ``seconds`` at most, from where the last turn stopped; whether all are clean
        (else the next slice goes on)."""
        left = clean_stored(db, collection_id, self.repeated(), after=self.cleaned_up_to(),
                            until=time.monotonic() + seconds)
        if left is not None:
            self.clean_from(left)
        return left is None

    def repeated(self) -> set[str]:
        """The repeated fingerprints, as counted so far."""
        flat: list[Any] = []
        for field, value in self.redis.hgetall(self.key).items():
            flat += [field, value]
        return _repeated(flat)


def _repeated(flat: list[Any], warmup: int = 0) -> set[str]:
    return repeated_in({_text(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)},
                       warmup=warmup)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def clean_outcomes(blocks: RepeatedBlocks, datas: Sequence[Any]) -> list[Any]:
    """Count the pages' ``data`` (None for a failed page) and return each without the blocks
    repeated by then."""
    counted = [page_units(data) for data in datas if data]
    repeated = blocks.count(counted)
    return [without_repeated(data, repeated) for data in datas]


def clean_stored(db: Database, collection_id: str, repeated: Set[str], *, after: int = 0,
                 until: float = math.inf, batch: int = 200) -> int | None:
    """Remove ``repeated`` blocks from the results stored after position ``after``, in the
    order they were stored, in batches, until the monotonic time ``until``: None once every
    result is clean, else the position to go on from (the next slice of the crawl does)."""
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
        after = rows[-1].seq
        if time.monotonic() >= until:
            return after
    return None
