"""``GET /account`` and ``GET /account/activity``."""

from __future__ import annotations

import base64
import binascii

from flask import g
from flask_smorest import Blueprint

from api.auth import authenticated
from api.errors import ApiError
from api.extensions import db
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.schemas import AccountSchema, ActivityPageSchema, ActivityQuerySchema
from crawler.formats import format_utc
from storage import accounts, activity

blp = authenticated(Blueprint("account", __name__, url_prefix=BASE_PATH,
                              description="Your account, balance and history."))

#: Row ids are 64-bit signed integers on both databases; a larger number reaches the driver as
#: an OverflowError (a 500), so it is refused as a cursor this API did not return.
MAX_ROW_ID = 2**63


def encode_cursor(row_id: int | None) -> str | None:
    return base64.urlsafe_b64encode(f"a:{row_id}".encode()).decode() if row_id else None


def decode_cursor(cursor: str | None) -> int | None:
    if not cursor:
        return None
    try:
        kind, _, value = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        row_id = int(value)
        if kind != "a" or not 0 < row_id < MAX_ROW_ID:
            raise ValueError(kind)  # a cursor we never issued (ids fit the databases' BIGINT)
        return row_id
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ApiError("validation_error", "Invalid request: check cursor.",
                       errors={"cursor": ["Not a cursor this API returned."]}) from None


@blp.route("/account", methods=["GET"])
@documented(blp, "getAccount", AccountSchema, AUTHENTICATED)
def account():
    """Your account: plan limits and credit balance."""
    with db().session() as session:
        row = accounts.find_account(session, g.principal.account_id)
    # The response schema reads the plan row's attributes (loaded with the account, and not
    # expired when the session closes).
    return {"id": row.id, "name": row.name, "plan": row.plan, "credits": {"balance": row.balance}}


@blp.route("/account/activity", methods=["GET"])
@documented(blp, "listActivity", ActivityPageSchema, (*AUTHENTICATED, 422), descriptions={
    422: "validation_error: `limit` out of range, or a `cursor` this API did not return."})
@blp.arguments(ActivityQuerySchema, location="query")
def account_activity(args: dict):
    """Every request, billed or not, newest first; pass `next_cursor` back for more."""
    rows, next_id = activity.page(
        db(), g.principal.account_id, before=decode_cursor(args["cursor"]), limit=args["limit"]
    )
    return {
        "activity": [
            {
                "id": f"act_{row.id}",
                "at": format_utc(row.at),
                "operation": row.operation,
                "credits": row.credits,
                "status": row.status,
                "request_id": row.request_id,
                "collection_id": row.collection_id,
                "url": row.url,
            }
            for row in rows
        ],
        "next_cursor": encode_cursor(next_id),
    }
