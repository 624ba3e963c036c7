"""The view of a running collection: a live progress bar on a terminal, a plain line now and
then anywhere else (a batch job's log file should not fill with redraws).

Drawn with ``rich`` rather than ``tqdm``; both are well kept, but rich was the better fit:
  - its bar is a row of columns we choose, each rendering values we set: pages done/total, our
    own rate and ETA (from the polls, see :class:`RateMeter`), and credits used, which tqdm
    could only append as a free-text postfix to its iteration counter;
  - a crawl's total grows as links are found, and a rich task takes a new total on any update;
  - its Console knows whether it writes to a terminal (and how wide one is, re-read on resize),
    which is the switch between the bar and plain lines;
  - it is already in the platform's lock file (schemathesis uses it), so the client adds no
    package to the environment.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Column

#: Seconds of polls the rate is measured over: long enough to smooth a crawl's bursts, short
#: enough to follow a slowdown.
RATE_WINDOW = 30.0
BAR_WIDTH = 30
#: Seconds between two plain lines (a change of status always prints one).
PLAIN_EVERY = 10.0


class RateMeter:
    """Pages per second over the last :data:`RATE_WINDOW` seconds of polls.

    Measured from what the polls saw rather than from the bar's own advances (rich's speed),
    so that a stall shows as a falling rate and a growing ETA instead of the last good rate.
    """

    def __init__(self, window: float = RATE_WINDOW,
                 clock: Callable[[], float] = time.monotonic):
        self.window, self.clock = window, clock
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, done: int) -> None:
        now = self.clock()
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()

    @property
    def rate(self) -> float | None:
        if len(self.samples) < 2:
            return None
        (start, first), (end, last) = self.samples[0], self.samples[-1]
        return (last - first) / (end - start) if end > start else None

    def eta(self, remaining: int) -> float | None:
        """Seconds until ``remaining`` more pages are done at the current rate."""
        if remaining <= 0:
            return 0.0
        rate = self.rate
        return remaining / rate if rate else None


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def rate_text(rate: float | None) -> str:
    return "- pages/s" if rate is None else f"{rate:.1f} pages/s"


def credits_text(credits: int) -> str:
    return f"{credits} credit{'' if credits == 1 else 's'}"


class ProgressDisplay:
    """An ``on_progress`` callback for :meth:`client.Client.wait`: give it each collection
    object read. Use as a context manager (the bar is live inside it); :meth:`pause` and
    :meth:`resume` make room for a question, as the Ctrl-C prompt does."""

    def __init__(self, collection_id: str, console: Console | None = None, *,
                 plain_every: float = PLAIN_EVERY, clock: Callable[[], float] = time.monotonic):
        self.collection_id = collection_id
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal and not self.console.is_dumb_terminal
        self.meter = RateMeter(clock=clock)
        self.clock, self.plain_every = clock, plain_every
        self.last_plain: tuple[float, str] | None = None  # (when, status) of the last line
        # Its status, not its id (printed above it): the line stays within 80 columns with
        # room for the "^C" a terminal echoes, which would otherwise wrap and leave a stale
        # copy of the bar behind when it stops for the question.
        self.progress = Progress(
            TextColumn("{task.description}", markup=False, table_column=Column(min_width=9)),
            BarColumn(bar_width=BAR_WIDTH), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}", markup=False),
            TextColumn("{task.fields[credits]}", markup=False),
            TextColumn("ETA {task.fields[eta]}", markup=False),
            console=self.console, transient=False, redirect_stdout=False,
            redirect_stderr=False)
        self.task: TaskID = self.progress.add_task(
            "queued", total=None, rate=rate_text(None), credits=credits_text(0),
            eta=clock_text(None))

    def __enter__(self) -> ProgressDisplay:
        self.resume()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.pause()

    def resume(self) -> None:
        if self.live:
            self.progress.start()

    def pause(self) -> None:
        if self.live:
            self.progress.stop()

    def __call__(self, collection: dict[str, Any]) -> None:
        self.update(collection)

    def update(self, collection: dict[str, Any]) -> None:
        progress, status = collection["progress"], collection["status"]
        done, total = progress["done"], progress["total"]
        self.meter.add(done)
        # nothing admitted yet (queued, or a crawl before its first page): no time to tell
        rate, eta = self.meter.rate, (self.meter.eta(total - done) if total else None)
        if status in ("completed", "cancelled", "failed", "expired"):
            eta = 0.0 if status == "completed" else None
        self.progress.update(self.task, description=status, completed=done,
                             total=total or None, rate=rate_text(rate),
                             credits=credits_text(collection["credits_used"]),
                             eta=clock_text(eta))
        if not self.live:
            self._plain(status, done, total, rate, collection["credits_used"], eta)

    def _plain(self, status: str, done: int, total: int, rate: float | None, credits: int,
               eta: float | None) -> None:
        now = self.clock()
        if self.last_plain is not None:
            when, last_status = self.last_plain
            if status == last_status and now - when < self.plain_every:
                return
        self.last_plain = (now, status)
        line = (f"{self.collection_id} {status}: {done}/{total} pages, {rate_text(rate)}, "
                f"{credits_text(credits)}, ETA {clock_text(eta)}")
        stream: TextIO = self.console.file
        print(line, file=stream, flush=True)


def summary(collection: dict[str, Any]) -> str:
    """One sentence on a finished (or any) collection, for the end of a run."""
    progress = collection["progress"]
    text = (f"{collection['id']} {collection['status']}: {progress['done']}/{progress['total']}"
            f" pages ({progress['succeeded']} succeeded, {progress['failed']} failed"
            + (f", {progress['robots_blocked']} blocked by robots.txt"
               if progress.get("robots_blocked") else "")
            + f"), {credits_text(collection['credits_used'])} used")
    if collection.get("stop_reason"):
        text += f"; stopped: {collection['stop_reason']}"
    skipped = skipped_text(progress.get("skipped") or {})
    if skipped:
        text += f"; URLs skipped: {skipped}"
    return text + "."


def skipped_text(counts: dict[str, int]) -> str:
    """The skipped URLs' counts for a person (``12 off_site, 3 robots``), most first; empty
    when none."""
    return ", ".join(f"{count} {reason}" for reason, count in
                     sorted(counts.items(), key=lambda item: -item[1]) if count)
