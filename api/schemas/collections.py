"""Schemas of the collections resource: what a client sends to start one, and the collection
it reads back (its results, skipped URLs, changes and export:
:mod:`api.schemas.collection_lists`)."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from api.schemas.fields import (
    JsonBoolean,
    RequestSchema,
    Response,
    Url,
    WholeNumber,
    printable,
)
from api.schemas.options import option_field
from core.contract import (
    COLLECTION_EVENTS,
    DEFAULT_EVENTS,
    DEFAULT_MAX_DEPTH,
    MAX_DEPTH,
    SKIP_REASONS,
)
from core.contract import COLLECTION_MODES as MODES
from core.operations import COLLECTION_EXTRACTS as EXTRACTS
from core.operations import COLLECTION_OPTIONS, EXTRACTIONS, MAX_AGE_OPTION
from core.patterns import MAX_PATTERN_LENGTH, MAX_PATTERNS, SYNTAX, pattern_errors
from core.scope import page_url_error

#: Fields a batch, or a crawl, refuses (422).
FOREIGN_TO_BATCH = ("url", "max_pages")
FOREIGN_TO_CRAWL = ("urls",)


def page_url(value: str) -> None:
    """A batch entry must be a URL a page of it can be fetched from
    (:func:`core.scope.page_url_error`): else a 422 naming its index, not a page that
    fails later."""
    error = page_url_error(value)
    if error:
        raise ValidationError(error)


class Patterns(fields.List):
    """A crawl's ``include_paths`` or ``exclude_paths``: each pattern compiled here by the
    engine that will match it (:func:`core.patterns.pattern_errors`, RE2), so a pattern
    RE2 refuses is a 422 naming its index, never a crawl that fails later."""

    RULES = (f" Regexes in RE2 syntax ({SYNTAX}), matched in linear time: backreferences and "
             f"lookarounds are refused. At most {MAX_PATTERNS} patterns of at most "
             f"{MAX_PATTERN_LENGTH} characters; a bad one is a 422 naming its index.")

    def __init__(self, description: str):
        super().__init__(fields.String(), load_default=list,
                         validate=validate.Length(max=MAX_PATTERNS),
                         metadata={"description": description + self.RULES})

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> list[str]:
        patterns = super()._deserialize(value, attr, data, **kwargs)
        errors = pattern_errors(patterns)
        if errors:
            raise ValidationError({index: [message] for index, message in errors.items()})
        return patterns


def _option_note(name: str) -> str:
    takers = [extract for extract in EXTRACTS
              if any(option.name == name for option in EXTRACTIONS[extract].options)]
    return f"extract {', '.join(takers)}: as on its operation."


class ChangeTrackingSchema(RequestSchema):
    """``change_tracking``: which earlier collections a collection's pages are compared with."""

    tag = fields.String(load_default=None, validate=[validate.Length(min=1, max=100),
                                                     printable], metadata={
        "description": "The pages of collections of the same tag are compared (default: the "
                       "site of the start URL, or of a batch's first URL)."})


class _CollectionRequest(RequestSchema):
    """``POST /collections``: a batch of URLs, or a crawl of one site (its extract's options:
    :data:`CollectionRequestSchema`)."""

    mode = fields.String(required=True, validate=validate.OneOf(MODES), metadata={
        "description": "`batch`: the pages of `urls`; `crawl`: pages of the site of `url`, "
                       "following links."})
    extract = fields.String(load_default="page", validate=validate.OneOf(EXTRACTS), metadata={
        "description": "What each page gives: `page` (as /scrape), `contacts`, `products`, "
                       "`schema` (the records of `schema`)."})
    urls = fields.List(
        Url(rule=page_url),
        validate=validate.Length(min=1), metadata={
            "description": "batch: the pages, at most the plan's `max_batch_urls` (413 "
                           "too_many_urls); duplicates (after canonicalisation) are fetched "
                           "once. An invalid entry is a 422 naming its index."})
    url = Url(required=False, metadata={
        "description": "crawl: the start URL; the crawl stays on its host (`www.` and the "
                       "bare host are one site)."})
    max_pages = WholeNumber(validate=validate.Range(min=1), metadata={
        "description": "crawl: pages stored at most, exactly; default and maximum: the plan's "
                       "`max_crawl_pages` (larger: 422)."})
    max_depth = WholeNumber(load_default=DEFAULT_MAX_DEPTH,
                            validate=validate.Range(min=0, max=MAX_DEPTH),
                            metadata={"description": "crawl: link hops from the start URL "
                                                     "(sitemap URLs are depth 1)."})
    include_paths = Patterns("crawl: regexes searched in the canonical path + query; a page "
                             "must match one (the start URL is always fetched).")
    exclude_paths = Patterns("crawl: regexes searched in the canonical path + query; a page "
                             "matching one is skipped.")
    use_sitemap = JsonBoolean(load_default=True, metadata={
        "description": "crawl: also take the site's sitemap URLs (robots.txt `Sitemap:` lines "
                       "and /sitemap.xml) as depth 1."})
    remove_repeated_blocks = JsonBoolean(load_default=True, metadata={
        "description": "crawl, extract `page`: drop from `text`, `markdown` and `html` the "
                       "blocks (paragraphs, list items, headings, table rows; never code) "
                       "that at least half of the crawl's pages, and 4 at least, repeat word "
                       "for word (cookie notices, sidebars); the pages stored before a block "
                       "was recognised are cleaned when the crawl completes."})
    webhook_url = Url(required=False, allow_none=True, load_default=None, metadata={
        "description": "Called with the events of `webhook_events`; by default once, when "
                       "the collection ends (see docs/api.md, Webhooks)."})
    webhook_events = fields.List(
        fields.String(validate=validate.OneOf(COLLECTION_EVENTS)),
        validate=validate.Length(min=1, max=len(COLLECTION_EVENTS)), metadata={
            "description": "The events sent to `webhook_url` (which needs to be given): any of "
                           + ", ".join(f"`{name}`" for name in COLLECTION_EVENTS)
                           + "; default " + ", ".join(f"`{name}`" for name in DEFAULT_EVENTS)
                           + ". `collection.page` is one event per stored or failed page, with "
                           "its result inline up to 64 KB, else a `result_url` to fetch it."})
    max_age = option_field(MAX_AGE_OPTION, note="Each page:")
    change_tracking = fields.Nested(ChangeTrackingSchema, load_default=None, metadata={
        "description": "Compare each page stored with its version of the latest earlier "
                       "collection of this account with the same `tag`: each result gets "
                       "`change` (`new`, `same`, `changed` with a unified diff of its "
                       "content); a completed collection lists the pages it did not find "
                       "again as `removed` (not a crawl cut by `max_pages`); "
                       "`progress.changes` counts them, `GET /collections/{id}/changes` lists "
                       "them. Pages the page cache holds are fetched conditionally: a 304 is "
                       "`same`."})

    @validates_schema
    def _own_options(self, data: dict[str, Any], **_: Any) -> None:
        """Each option given must be one of the extract's own."""
        extract = data.get("extract", "page")
        own = {option.name for option in EXTRACTIONS[extract].options}
        errors = {name: [f"Not an option of extract {extract}."]
                  for name in COLLECTION_OPTIONS if name in data and name not in own}
        errors.update({option.name: ["Missing data for required field."]
                       for option in EXTRACTIONS[extract].options
                       if option.required and data.get(option.name) is None})
        if errors:
            raise ValidationError(errors)

    @validates_schema
    def _events_need_a_url(self, data: dict[str, Any], **_: Any) -> None:
        """``webhook_events`` say what is sent to ``webhook_url``: none without it."""
        if data.get("webhook_events") is not None and not data.get("webhook_url"):
            raise ValidationError({"webhook_events": ["Needs a webhook_url to send them to."]})

    @validates_schema
    def _one_mode(self, data: dict[str, Any], **_: Any) -> None:
        """``urls`` is batch's, ``url`` and ``max_pages`` are crawl's (the crawl's defaulted
        options are ignored in a batch)."""
        batch = data.get("mode") == "batch"
        errors = {name: [f"Not a field of mode {data['mode']}."]
                  for name in (FOREIGN_TO_BATCH if batch else FOREIGN_TO_CRAWL) if name in data}
        needed = "urls" if batch else "url"
        if needed not in data:
            errors[needed] = ["Missing data for required field."]
        if errors:
            raise ValidationError(errors)


#: ``POST /collections``: the fields above, then the options of the extracts (each accepted
#: only with an extract that takes it), derived from the table of operations.
CollectionRequestSchema = type("CollectionRequestSchema", (_CollectionRequest,), {
    **{name: option_field(option, defaulted=False, note=_option_note(name))
       for name, option in COLLECTION_OPTIONS.items()},
    "__module__": __name__, "__doc__": _CollectionRequest.__doc__})


#: What each skip reason means, as the API documents it.
SKIP_REASON_TEXT = {
    "robots": "robots.txt of its host disallows it (or could not be read).",
    "excluded_path": "An `exclude_paths` pattern matches it.",
    "not_included": "No `include_paths` pattern matches it.",
    "depth": "Found more than `max_depth` hops from the start URL.",
    "off_site": "On another site than the start URL's.",
    "duplicate": "Fetched, but another page had its address (redirect, rel=canonical) first: "
                 "`duplicate_of` is that page's canonical URL.",
    "limit": "Found past `max_pages` (recorded when the crawl ends).",
    "policy": "The source policy refuses it.",
    "cancelled": "Admitted, and not fetched or not stored because the collection stopped "
                 "first (cancelled, out of credits, stalled).",
}

#: ``progress.skipped``: a count for every reason.
SkipCountsSchema = type("SkipCountsSchema", (Response,), {
    **{reason: fields.Integer(metadata={"description": SKIP_REASON_TEXT[reason]})
       for reason in SKIP_REASONS},
    "__module__": __name__,
    "__doc__": "URLs seen and not fetched, by reason (each distinct URL once)."})


class ChangeCountsSchema(Response):
    new = fields.Integer(metadata={"description": "Pages the tag's collections had not seen."})
    same = fields.Integer(metadata={"description": "Pages whose content did not change."})
    changed = fields.Integer(metadata={"description": "Pages whose content changed."})
    removed = fields.Integer(metadata={"description": "Pages of earlier collections of the "
                                                      "tag not found again, counted when the "
                                                      "collection completes."})


class ChangeSchema(Response):
    status = fields.String(metadata={"description": "new, same or changed."})
    previous_fetched_at = fields.String(allow_none=True, metadata={
        "description": "When the version compared with was fetched; null for new."})
    diff = fields.String(allow_none=True, metadata={
        "description": "changed: a unified diff of the page's markdown (else text), at most "
                       "64 KB; null otherwise."})


class ProgressSchema(Response):
    total = fields.Integer(metadata={"description": "Pages admitted so far; never decreases."})
    done = fields.Integer(metadata={"description": "succeeded + failed."})
    succeeded = fields.Integer()
    failed = fields.Integer()
    robots_blocked = fields.Integer(metadata={
        "description": "Pages robots.txt disallowed (never fetched; counted in failed)."})
    skipped = fields.Nested(SkipCountsSchema, metadata={
        "description": "URLs seen and not fetched, by reason: every reason, 0 when none. "
                       "`GET /collections/{id}/skipped` lists them."})
    changes = fields.Nested(ChangeCountsSchema, allow_none=True, metadata={
        "description": "With `change_tracking`: the pages by change (`removed` once "
                       "completed); null without."})


class WebhookDeliverySchema(Response):
    status = fields.String(metadata={"description": "pending, delivered or failed."})
    attempts = fields.Integer()
    last_status = fields.Integer(allow_none=True, metadata={
        "description": "HTTP status of the last attempt; null before one, or when none "
                       "answered (refused, timed out)."})


class CollectionSchema(Response):
    id = fields.String()
    mode = fields.String()
    extract = fields.String()
    status = fields.String(metadata={
        "description": "queued, running, completed, cancelled, failed or expired."})
    stop_reason = fields.String(allow_none=True)
    created_at = fields.String()
    started_at = fields.String(allow_none=True)
    finished_at = fields.String(allow_none=True)
    expires_at = fields.String(allow_none=True, metadata={
        "description": "finished_at + the retention (7 days by default)."})
    progress = fields.Nested(ProgressSchema)
    credits_used = fields.Integer()
    webhook = fields.Nested(WebhookDeliverySchema, allow_none=True, metadata={
        "description": "The delivery of the event of the collection's end; null when none "
                       "was asked (no `webhook_url`, or `webhook_events` without the end's)."})
    monitor_id = fields.String(allow_none=True, metadata={
        "description": "The monitor this collection is a run of; null for others."})


class CollectionPageSchema(Response):
    collections = fields.List(fields.Nested(CollectionSchema))
    next_cursor = fields.String(allow_none=True)


class PageQuerySchema(RequestSchema):
    cursor = fields.String(load_default=None)
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))
