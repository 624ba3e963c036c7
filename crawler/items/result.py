"""Items every spider yields.

One :class:`PageResult` per page fetched or attempted — the same shape the API returns for
collection results — so ``scrapy crawl … -O out.jsonl`` records failures as well as data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crawler.contract import PageStatus
from crawler.formats import utc_now


@dataclass
class PageResult:
    """The outcome of one page.

    ``url`` is the URL as requested; ``final_url`` the one after redirects (``None`` when no
    response came); ``error`` is ``{"error": code, "message": …, "details": {…}}`` on failure;
    ``data`` holds the operation's item (for ``page``, the :class:`~crawler.items.page.Page`
    that :func:`~crawler.extract.page.extract_page` returns); ``ItemAdapter(result).asdict()``
    (what jobs return and feed exports write) turns it into plain JSON values.
    """

    url: str
    status: PageStatus
    final_url: str | None = None
    status_code: int | None = None
    fetched_at: str = field(default_factory=utc_now)
    error: dict[str, Any] | None = None
    data: Any = None
