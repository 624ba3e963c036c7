"""``/account``: the account, its plan, its history, its webhook secret."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemas.fields import RequestSchema, Response, Url, WholeNumber
from core.contract import LOW_BALANCE_EVENT

_THRESHOLD = (f"`{LOW_BALANCE_EVENT}` is sent to `webhook_url` when a charge takes the balance "
              "below this many credits, once, and again only after a grant lifted it back to "
              "at least this; null: never.")
_WEBHOOK = (f"Where the account's own events go (`{LOW_BALANCE_EVENT}`), signed as "
            "collections' webhooks are; null: nowhere.")


class PlanSchema(Response):
    name = fields.String()
    requests_per_minute = fields.Integer()
    max_batch_urls = fields.Integer()
    max_crawl_pages = fields.Integer()
    max_running_collections = fields.Integer()
    max_concurrent_requests = fields.Integer(metadata={
        "description": "Single-page requests (scrape, contacts, products, video-platform) the "
                       "account may have in flight at once; more are refused at once, 429 "
                       "rate_limited."})
    max_map_urls = fields.Integer(metadata={
        "description": "The most URLs one `POST /map` may ask for (its `limit`)."})
    max_monitors = fields.Integer(metadata={
        "description": "The most monitors the account may have, paused ones included."})


class CreditsSchema(Response):
    balance = fields.Integer()


class AccountSchema(Response):
    id = fields.String()
    name = fields.String()
    plan = fields.Nested(PlanSchema)
    credits = fields.Nested(CreditsSchema)
    low_balance_threshold = fields.Integer(allow_none=True, metadata={"description": _THRESHOLD})
    webhook_url = fields.String(allow_none=True, metadata={"description": _WEBHOOK})


class AccountUpdateSchema(RequestSchema):
    """``PATCH /account``: the fields given change, the others stay."""

    low_balance_threshold = WholeNumber(allow_none=True, validate=validate.Range(
        min=0, max=10**12), metadata={"description": _THRESHOLD})
    webhook_url = Url(required=False, allow_none=True, metadata={
        "description": _WEBHOOK + " Must pass the source policy (else 422)."})


class WebhookSecretSchema(Response):
    secret = fields.String(metadata={
        "description": "The new signing secret (`whsec_` + base64 of the key), shown only "
                       "now: webhooks are signed with it from now on."})
    previous_secret_expires_at = fields.String(allow_none=True, metadata={
        "description": "Until then the secret before this one signs too (a second `v1,` "
                       "signature), so receivers can switch without missing a delivery; "
                       "null when there was none to keep."})


class ActivityQuerySchema(RequestSchema):
    cursor = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))


class ActivitySchema(Response):
    id = fields.String()
    at = fields.String()
    operation = fields.String()
    credits = fields.Integer()
    status = fields.String()
    request_id = fields.String(allow_none=True)
    collection_id = fields.String(allow_none=True)
    url = fields.String(allow_none=True)
    cached = fields.Boolean(metadata={
        "description": "Answered from the page cache (`max_age`), not fetched."})
    channel = fields.String(allow_none=True, metadata={
        "description": "How the request came: `api`, `console` or `mcp` (a tool call of the "
                       "MCP server); null for a line the platform wrote itself (a monitor's "
                       "run, a released reservation) and for lines older than this field."})


class ActivityPageSchema(Response):
    activity = fields.List(fields.Nested(ActivitySchema))
    next_cursor = fields.String(allow_none=True)
