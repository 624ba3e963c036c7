"""The one error shape of every answer that is not a success (:mod:`api.errors`)."""

from __future__ import annotations

from marshmallow import Schema, fields

from api.schemas.fields import Response


class ErrorDetailsSchema(Response):
    url = fields.String(allow_none=True, metadata={"description": "The URL that failed."})
    target_status = fields.Integer(allow_none=True, metadata={
        "description": "The target's HTTP status, when it answered."})


class ErrorSchema(Schema):
    """The one error shape of every layer (see api.errors); ``details`` only for errors that
    come from a target."""

    code = fields.Integer(required=True, metadata={"description": "The HTTP status."})
    status = fields.String(required=True, metadata={"description": "The HTTP status phrase."})
    error = fields.String(required=True, metadata={
        "description": "Stable machine code (see docs/api.md, Errors)."})
    message = fields.String(required=True)
    request_id = fields.String(required=True)
    errors = fields.Dict(required=True, metadata={
        "description": "Field-level messages (422 validation_error); {} otherwise."})
    details = fields.Nested(ErrorDetailsSchema, metadata={
        "description": "For errors that come from a target: its URL and status."})
