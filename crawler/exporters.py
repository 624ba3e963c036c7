"""Feed exporters: what ``scrapy crawl … -O out.csv`` writes.

Scrapy's CSV exporter writes a nested value as Python's ``repr`` (``{'title': 'x'}``), which
no CSV reader turns back into data, and writes any cell as it comes. A page result's ``data``
and ``error`` are nested, and its cells hold page text written by strangers. So, as docs/api.md
asks of a collection's CSV export: one row per page, nested fields as JSON text, and cells
that would start a spreadsheet formula neutralised. JSON and JSON Lines feeds are unchanged
(settings: ``FEED_EXPORTERS``).
"""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import is_item
from scrapy.exporters import CsvItemExporter
from scrapy.utils.serialize import ScrapyJSONEncoder

from core.formats import csv_cell

logger = logging.getLogger(__name__)


class JsonCellCsvItemExporter(CsvItemExporter):
    """Scrapy's CSV exporter, with nested fields as JSON text and safe text cells."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._json = ScrapyJSONEncoder(ensure_ascii=False, sort_keys=False)

    def serialize_field(self, field: Any, name: str, value: Any) -> Any:
        if isinstance(value, dict | list | tuple) or is_item(value):
            value = self._json.encode(value)
        else:
            value = super().serialize_field(field, name, value)
        return csv_cell(value) if isinstance(value, str) else value
