"""The table of operations (core.operations): what is derived from it agrees with it, and the
history names, routes and series clients read never change by accident."""

from __future__ import annotations

from dataclasses import fields

from api.exports import DATA_KEYS
from core.items.page import Page
from core.operations import (
    BY_EXTRACTION,
    BY_PATH,
    COLLECTION_EXTRACTS,
    EXTRACTIONS,
    OPERATIONS,
    PAGE_OPERATIONS,
    USAGE,
    operation,
    page_operation,
)
from storage import usage

#: The history's names and the routes of every operation, as clients read them.
CONTRACT = {
    "/scrape": "scrape", "/contacts": "contacts", "/products": "products",
    "/video-platform": "video_platform", "/map": "map", "/search": "search",
    "/search/news": "search_news",
    "/search/videos": "search_videos", "/collections": "collection",
    "/collections/<collection_id>/cancel": "collection_cancel",
    "/account/webhook-secret": "webhook_secret", "/monitors": "monitor",
}


def test_every_operation_keeps_its_route_and_history_name():
    assert BY_PATH == CONTRACT
    assert len({op.name for op in OPERATIONS}) == len(OPERATIONS)


def test_the_page_operations_and_what_collections_may_extract():
    assert [op.name for op in PAGE_OPERATIONS] == ["scrape", "contacts", "products",
                                                    "video_platform", "map"]
    assert COLLECTION_EXTRACTS == ("page", "contacts", "products", "schema")
    assert "schema" not in BY_EXTRACTION  # a collection's extraction, no operation of its own
    assert page_operation("page") is operation("scrape")
    assert EXTRACTIONS["page"].data_keys == tuple(f.name for f in fields(Page))
    assert {name: EXTRACTIONS[name].data_keys for name in COLLECTION_EXTRACTS} == DATA_KEYS


def test_the_usage_series_come_from_the_table():
    assert usage.GROUPS == USAGE
    assert usage.SERIES == ("scrape", "contacts", "products", "video", "map", "search",
                            "collections")


def test_options_take_their_defaults():
    page = EXTRACTIONS["page"]
    defaults = {"include_links": True, "include_metadata": True, "formats": ["text"],
                "only_main_content": True, "include_selectors": [], "exclude_selectors": [],
                "schema": None}
    assert page.option_values({}) == defaults
    assert page.option_values({"include_links": False, "other": 1}) == {
        **defaults, "include_links": False}
    assert page.option_values({})["formats"] is not page.option_values({})["formats"]
