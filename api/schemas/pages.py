"""The page operations' bodies and answers, made from their declarations
(:data:`core.operations.PAGE_OPERATIONS`): a body is its URL and its options, an answer its
envelope then its item."""

from __future__ import annotations

import functools

from marshmallow import Schema, fields

from api.schemas.fields import RequestSchema, Response, Url, item_schema
from api.schemas.options import option_field
from core.operations import MAX_AGE_OPTION, Extraction, Operation


class BilledResponseSchema(Response):
    """Fields every billed operation answers with."""

    request_id = fields.String()
    credits_used = fields.Integer()


class CachedResponseSchema(BilledResponseSchema):
    """Fields every page operation answers with: whether the answer came from the page
    cache."""

    cached = fields.Boolean(metadata={
        "description": "Whether this answer came from the page cache (see `max_age`), not a "
                       "fetch for this request."})
    cached_at = fields.String(allow_none=True, metadata={
        "description": "When the cached answer was fetched (or last confirmed unchanged), "
                       "ISO 8601 UTC; null for a fresh fetch."})


class PageResponseSchema(CachedResponseSchema):
    """Fields every single-page operation answers with (the page result's)."""

    url = fields.String(metadata={"description": "As requested."})
    final_url = fields.String(metadata={"description": "After redirects."})
    status_code = fields.Integer()
    fetched_at = fields.String(metadata={"description": "ISO 8601 UTC."})


@functools.cache
def page_response_schema(page: Operation) -> type[Schema]:
    """The answer of page operation ``page``: its envelope's fields first (a billed answer's,
    and the page result's when ``common_fields``), then its item's (marshmallow orders the
    fields of the last base first); ``<title>ResponseSchema``, for the OpenAPI document."""
    assert page.extraction is not None
    envelope = PageResponseSchema if page.common_fields else CachedResponseSchema
    return type(f"{page.extraction.title}ResponseSchema",
                (item_schema(page.extraction.item), envelope), {"__module__": __name__})


class UrlRequestSchema(RequestSchema):
    """Body of the one-URL operations without options (contacts, products, video)."""

    url = Url()
    max_age = option_field(MAX_AGE_OPTION)


@functools.cache
def page_request_schema(extraction: Extraction) -> type[Schema]:
    """The body of a page operation: its URL, and its options (with their defaults); the
    shared :class:`UrlRequestSchema` for one without options."""
    if not extraction.options:
        return UrlRequestSchema
    fields_ = {"url": Url(), **{option.name: option_field(option)
                               for option in (*extraction.options, MAX_AGE_OPTION)}}
    return type(f"{extraction.title}RequestSchema", (RequestSchema,),
                {**fields_, "__module__": __name__})
