"""Items every spider yields.

One :class:`PageResult` per page fetched or attempted — the same shape the API returns for
collection results — so ``scrapy crawl … -O out.jsonl`` records failures as well as data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from core.contract import PageStatus
from core.formats import utc_now


@dataclass
class PageResult:
    """The outcome of one page.

    ``url`` is the URL as requested; ``final_url`` the one after redirects (``None`` when no
    response came); ``error`` is ``{"error": code, "message": …, "details": {…}}`` on failure;
    ``data`` holds the operation's item (for ``page``, the :class:`~core.items.page.Page`
    that :func:`~crawler.extract.page.extract_page` returns); :func:`plain` (or
    ``ItemAdapter(result).asdict()``, the same)
    (what jobs return and feed exports write) turns it into plain JSON values.
    """

    url: str
    status: PageStatus
    final_url: str | None = None
    status_code: int | None = None
    fetched_at: str = field(default_factory=utc_now)
    error: dict[str, Any] | None = None
    data: Any = None


@dataclass
class ResponseCaching:
    """What a page's response says about keeping its answer (the page cache, ``max_age``):
    whether a shared cache may (``Cache-Control`` without ``no-store`` or ``private``), and
    its validators for a later conditional request. Yielded after the page's
    :class:`PageResult` by a spider asked for it (``report_caching``); not part of the
    answer."""

    storable: bool = True
    etag: str | None = None
    last_modified: str | None = None


#: ``status_code`` of a page that answered 304 Not Modified to a conditional request: its
#: :class:`PageResult` has no ``data`` (the cached answer stands).
NOT_MODIFIED = 304


#: Field names of each type :func:`plain` met (None: not a dataclass), and the types that
#: are plain JSON already: asking ``dataclasses.fields()`` for every value was most of its time.
_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}
_LEAVES = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """``value`` as plain JSON values: every item (a dataclass) a dict of its fields, all the
    way down — what ``ItemAdapter(item).asdict()`` gives for our items, in a fraction of its
    time (it asks every value which kind of item it may be; a page result holds hundreds of
    values, and a collection converts one per page on a busy worker: 0.04 ms a page here
    against 0.13 with ``dataclasses.fields()`` asked each time: docs/benchmarks.md,
    Collections throughput)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind not in _FIELD_NAMES:
        _FIELD_NAMES[kind] = (tuple(spec.name for spec in fields(value))
                              if is_dataclass(value) and not isinstance(value, type) else None)
    names = _FIELD_NAMES[kind]
    if names is not None:
        return {name: plain(getattr(value, name)) for name in names}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value
