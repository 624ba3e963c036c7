"""``GET /account``, ``PATCH /account``, ``GET /account/activity`` and
``POST /account/webhook-secret``."""

from __future__ import annotations

from flask import g
from flask_smorest import Blueprint

from api import cursors
from api.auth import authenticated, bodyless
from api.errors import ApiError
from api.extensions import db, source_policy
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.operations import history_written
from api.schemas.account import (
    AccountSchema,
    AccountUpdateSchema,
    ActivityPageSchema,
    ActivityQuerySchema,
    WebhookSecretSchema,
)
from core.formats import format_utc
from core.policy import PolicyRefusal
from storage import accounts, activity, webhooks

blp = authenticated(Blueprint("account", __name__, url_prefix=BASE_PATH,
                              description="Your account, balance and history."))

#: The kind of the history's cursors (:mod:`api.cursors`).
CURSOR = "a"


@blp.route("/account", methods=["GET"])
@documented(blp, "getAccount", AccountSchema, AUTHENTICATED)
def account():
    """Your account: plan limits and credit balance."""
    with db().session() as session:
        row = accounts.find_account(session, g.principal.account_id)
    return _body(row)


def _body(row) -> dict:
    """The account as answered. The response schema reads the plan row's attributes (loaded
    with the account, and not expired when the session closes)."""
    return {"id": row.id, "name": row.name, "plan": row.plan, "credits": {"balance": row.balance},
            "low_balance_threshold": row.low_balance_threshold, "webhook_url": row.webhook_url}


@blp.route("/account", methods=["PATCH"])
@documented(blp, "updateAccount", AccountSchema, (*AUTHENTICATED, 400, 413, 422),
            descriptions={400: "bad_request: the body is not JSON.",
                          422: "validation_error: a negative threshold, a webhook_url the "
                               "source policy refuses."})
@blp.arguments(AccountUpdateSchema)
def update_account(args: dict):
    """Set your low-balance threshold and the webhook URL of your account's events.

    `account.low_balance` is sent once when a charge takes the balance below the threshold,
    and again only after a grant lifted the balance back to at least it.
    """
    if args.get("webhook_url"):
        try:
            source_policy().check_url(args["webhook_url"])
        except PolicyRefusal as exc:
            raise ApiError("validation_error", "Invalid request: check webhook_url.",
                           errors={"webhook_url": [exc.message]}) from None
    row = webhooks.update_settings(db(), g.principal.account_id, args,
                                   request_id=g.request_id)
    history_written()  # by update_settings
    with db().session() as session:
        return _body(accounts.find_account(session, row.id))


@blp.route("/account/activity", methods=["GET"])
@documented(blp, "listActivity", ActivityPageSchema, (*AUTHENTICATED, 422), descriptions={
    422: "validation_error: `limit` out of range, or a `cursor` this API did not return."})
@blp.arguments(ActivityQuerySchema, location="query")
def account_activity(args: dict):
    """Every request, billed or not, newest first; pass `next_cursor` back for more."""
    before = cursors.decode_id(CURSOR, args["cursor"]) if args["cursor"] else None
    rows, next_id = activity.page(db(), g.principal.account_id, before=before,
                                  limit=args["limit"])
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
                "cached": bool(row.cached),
                "channel": row.channel,
            }
            for row in rows
        ],
        "next_cursor": cursors.encode(CURSOR, next_id) if next_id else None,
    }


@blp.route("/account/webhook-secret", methods=["POST"])
@bodyless
@documented(blp, "rotateWebhookSecret", WebhookSecretSchema,
            (*AUTHENTICATED, 400, 409, 413, 422),
            descriptions={400: "bad_request: the body, if any, is not JSON."})
def rotate_webhook_secret():
    """Create or rotate the secret that signs your webhooks, and show it (this once).

    Webhooks are signed the Standard Webhooks way (`webhook-signature: v1,<base64 HMAC>`).
    For 24 hours after a rotation the secret before signs too, as a second `v1,` entry.
    """
    secret, previous_until = webhooks.rotate_secret(db(), g.principal.account_id,
                                                    request_id=g.request_id)
    history_written()  # by rotate_secret
    return {"secret": secret, "previous_secret_expires_at": format_utc(previous_until)}
