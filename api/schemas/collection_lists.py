"""Schemas of what a client reads of a collection a page at a time, or as one file: its
results, its skipped URLs and the export's query (the collection itself, and what starts one:
:mod:`api.schemas.collections`)."""

from __future__ import annotations

import copy
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from api.exports import FORMATS as EXPORT_FORMATS
from api.exports import INCLUDES as EXPORT_INCLUDES
from api.schemas.collections import SKIP_REASON_TEXT, ChangeSchema, PageQuerySchema
from api.schemas.fields import AnyOf, Names, RequestSchema, Response
from core.changes import CHANGES, STATUSES
from core.contract import SKIP_REASONS


class FieldNames(fields.String):
    """A comma-separated list of names (``fields=url,status,data.title``), as a list; which
    names a collection's results have is checked against its ``extract`` (api.exports)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> list[str]:
        text = super()._deserialize(value, attr, data, **kwargs)
        names = [name.strip() for name in text.split(",") if name.strip()]
        if not names:
            raise ValidationError("Name at least one field.")
        return names


class ResultFilterSchema(RequestSchema):
    """What of a collection's results a client asks for: the results endpoint and the export
    take the same filters."""

    status = fields.String(load_default=None, validate=validate.OneOf(
        ("succeeded", "failed")), metadata={"description": "Only the results of this status."})
    # ``fields`` is the name a Schema keeps its own fields under: the attribute differs.
    field_names = FieldNames(data_key="fields", load_default=None, metadata={
        "description": "Comma-separated keys each result keeps, in this order: any of `url`, "
                       "`final_url`, `status`, `status_code`, `fetched_at`, `error`, `data`, "
                       "and `data.<key>` for one key of `data` (`data.title`; the keys of the "
                       "collection's `extract`); the others are left out. An unknown name is a "
                       "422 naming it. Default: every key."})


class ResultsQuerySchema(PageQuerySchema, ResultFilterSchema):
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class ResultErrorSchema(Response):
    error = fields.String()
    message = fields.String()


class ResultSchema(Response):
    url = fields.String()
    final_url = fields.String(allow_none=True)
    status = fields.String(metadata={"description": "succeeded or failed."})
    status_code = fields.Integer(allow_none=True)
    fetched_at = fields.String(allow_none=True)
    error = fields.Nested(ResultErrorSchema, allow_none=True)
    data = fields.Dict(allow_none=True, metadata={
        "description": "The /scrape, /contacts or /products body fields of the page."})
    change = fields.Nested(ChangeSchema, allow_none=True, metadata={
        "description": "With `change_tracking`: the page against its latest earlier version "
                       "under the tag; null for a failed page, and without change tracking."})


#: A result of a request with ``fields``: the keys named, no others (``data`` with only the
#: ``data.<key>`` keys named). Documented apart from :class:`ResultSchema`, whose keys are
#: always there, so that a client generated from the document reads both.
SelectedResultSchema = type("SelectedResultSchema", (Schema,), {
    **copy.deepcopy(ResultSchema._declared_fields), "__module__": __name__,
    "__doc__": "A result with only the keys `fields` named."})


class ResultsPageSchema(Response):
    results = fields.List(AnyOf(fields.Nested(ResultSchema), fields.Nested(SelectedResultSchema)),
                          metadata={"description": "Each result, whole (`Result`); with "
                                                   "`fields`, the keys named only "
                                                   "(`SelectedResult`)."})
    next_cursor = fields.String(allow_none=True, metadata={
        "description": "Pass it back for the results after these; null once the collection "
                       "is final and every result was returned."})


class SkippedQuerySchema(PageQuerySchema):
    reason = fields.String(load_default=None, validate=validate.OneOf(SKIP_REASONS), metadata={
        "description": "Only the URLs skipped for this reason."})
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class SkippedSchema(Response):
    url = fields.String(metadata={"description": "As the crawl found it."})
    reason = fields.String(metadata={"description": ", ".join(
        f"`{reason}`: {text}" for reason, text in SKIP_REASON_TEXT.items())})
    duplicate_of = fields.String(allow_none=True, metadata={
        "description": "`duplicate`: the canonical URL of the page stored for it; else null."})


class ExportedSkippedSchema(SkippedSchema):
    """A skipped URL in an export (``include=skipped``): as ``/skipped`` gives it, and its
    ``status``."""

    status = fields.String(metadata={"description": "`skipped`."})


class ExportedRemovedSchema(Response):
    """A page change tracking did not find again, in an export (``include=removed``)."""

    url = fields.String()
    status = fields.String(metadata={"description": "`removed`."})
    previous_fetched_at = fields.String(allow_none=True, metadata={
        "description": "When its last version was fetched."})


class SkippedPageSchema(Response):
    skipped = fields.List(fields.Nested(SkippedSchema))
    next_cursor = fields.String(allow_none=True, metadata={
        "description": "Pass it back for the URLs after these; null once the collection is "
                       "final and every one kept was returned."})


class ExportQuerySchema(ResultFilterSchema):
    format = fields.String(required=True, validate=validate.OneOf(tuple(EXPORT_FORMATS)),
                           metadata={"description": "`json` (one array), `jsonl` (one result "
                                                    "a line) or `csv` (one row a page)."})
    include = Names(EXPORT_INCLUDES, load_default=None, metadata={
        "description": "What follows the results, comma-separated or repeated: `skipped`, "
                       "the collection's skipped URLs, each `{\"url\", \"status\": "
                       "\"skipped\", \"reason\", \"duplicate_of\"}` (CSV: the columns "
                       "`reason` and `duplicate_of` are added); `removed` (change tracking), "
                       "the pages it did not find again, each `{\"url\", \"status\": "
                       "\"removed\", \"previous_fetched_at\"}` (CSV: the column "
                       "`previous_fetched_at` is added when it has none)."})


class ChangesQuerySchema(PageQuerySchema):
    status = Names(STATUSES, load_default=lambda: frozenset(CHANGES), metadata={
        "default": ",".join(CHANGES),
        "description": f"Only the changes of these statuses, comma-separated or repeated: any "
                       f"of {', '.join(STATUSES)}. Default: {', '.join(CHANGES)}."})
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class PageChangeSchema(Response):
    url = fields.String(metadata={"description": "The page, as the collection asked for it."})
    status = fields.String(metadata={"description": ", ".join(STATUSES) + "."})
    fetched_at = fields.String(allow_none=True, metadata={
        "description": "When this collection fetched the page; null for removed."})
    previous_fetched_at = fields.String(allow_none=True, metadata={
        "description": "When the earlier version (compared with, or removed) was fetched; "
                       "null for new."})
    diff = fields.String(allow_none=True, metadata={
        "description": "changed: a unified diff of the page's markdown (else text), at most "
                       "64 KB; null otherwise."})


class ChangesPageSchema(Response):
    changes = fields.List(fields.Nested(PageChangeSchema))
    next_cursor = fields.String(allow_none=True, metadata={
        "description": "Pass it back for the changes after these; null once the collection "
                       "is final and every change was returned."})
