"""One slice's side of the host gates (:mod:`collecting.host_gate`): its share of each host's
permits, the permits it asks for and gives back, and the Crawl-delays it reports.

A slice takes at most its share of a host's permits (every slice of the collection gets one),
and asks again for a refused host only when the gate said it may: one slice holding every
permit (and the pages behind them) leaves the others idle, so a crawl of one site used one
worker's core of two (``bench/crawl.py``). Permits of pages done are given back with the next
asks, in the same round trip.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence

from collecting.frontier import Entry
from collecting.host_gate import HostGate, host_of

#: A page allowed to start: its entry, its host, its permit.
Granted = tuple[Entry, str, str]


class HostShare:
    """The permits of one slice, on ``gate``, each host's at most :attr:`share`."""

    def __init__(self, gate: HostGate, cap: int):
        self.gate = gate
        self.cap = cap
        #: The most permits of one host this slice may hold: the cap until the collection's
        #: width is known (:meth:`split`).
        self.share = cap
        self._id = uuid.uuid4().hex
        #: Pages of each host this slice has in flight.
        self._per_host: Counter[str] = Counter()
        #: When each refused host may be asked again.
        self._retry_at: dict[str, float] = {}
        #: Permits of pages done, given back with the next asks (one round trip).
        self._releasing: list[tuple[str, str]] = []
        #: Hosts whose Crawl-delay this slice reported to the gate.
        self._delays_known: set[str] = set()

    def split(self, slices: int) -> None:
        """The share of one of ``slices`` slices: the cap divided among them, at least 1."""
        self.share = max(1, math.ceil(self.cap / slices))

    def ask(self, waiting: Sequence[Entry], now: float) -> tuple[list[Entry], list[Granted]]:
        """Ask the gates for the ``waiting`` pages whose host may be asked (giving back the
        permits of the pages done, in the same round trip); the pages still waiting, and
        those granted a permit."""
        still: list[Entry] = []
        asking: list[Granted] = []
        planned: Counter[str] = Counter()
        for entry in waiting:
            host = host_of(entry.url)
            if (self._retry_at.get(host, 0.0) > now
                    or self._per_host[host] + planned[host] >= self.share):
                still.append(entry)
                continue
            planned[host] += 1
            asking.append((entry, host, f"{self._id}:{entry.key}"))
        answers = self.exchange([(host, permit) for _, host, permit in asking])
        granted: list[Granted] = []
        for (entry, host, permit), wait_ms in zip(asking, answers, strict=True):
            if wait_ms:
                self._retry_at[host] = now + wait_ms / 1000
                still.append(entry)
            else:
                granted.append((entry, host, permit))
                self._per_host[host] += 1
        return still, granted

    def done(self, permits: Iterable[tuple[str, str]]) -> None:
        """Pages in flight are done (or given up): their ``(host, permit)`` come free, given
        back with the next asks (or :meth:`exchange`)."""
        for host, permit in permits:
            self._releasing.append((host, permit))
            self._per_host[host] -= 1

    def exchange(self, asks: Sequence[tuple[str, str]] = ()) -> list[int]:
        """Give back the permits of the pages done and ask for ``asks`` (``(host, permit)``),
        in one round trip; the answers as :meth:`HostGate.exchange` gives them."""
        releasing, self._releasing = self._releasing, []
        return self.gate.exchange(releasing, asks)

    def report_delay(self, host: str, seconds: float | None) -> None:
        """The Crawl-delay ``host``'s robots.txt asks for (None: none read), told to the
        gate once."""
        if host not in self._delays_known and seconds is not None:
            self.gate.set_delay(host, seconds)
            self._delays_known.add(host)
