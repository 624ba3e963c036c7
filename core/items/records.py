"""Records read by a selector schema (``extract: "schema"`` of a collection,
``scrapy crawl schema``): the schema's fields, one object a record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.items.fields import described


@dataclass(kw_only=True)
class Records:
    """The records a schema reads from one page, in document order."""

    records: list[dict[str, Any]] = described(
        "One object a record (at most 1,000), each with every field of the schema.",
        factory=list)
