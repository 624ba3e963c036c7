"""``Idempotency-Key`` on every POST: the same key and body within 24 hours get the first
answer again, replayed, and run (and charge) nothing more.

Request hooks of every authenticated blueprint (:func:`install`, called by
``api.auth.authenticated``), so each POST operation — and any added later — has it without a
decorator to forget. The hooks run after authentication, the rate limit and the JSON-object
check, and before the operation validates its fields and reserves credits:

- ``before_request`` claims the key in the database (:mod:`storage.idempotency`): one insert
  of the unique (account, key) row decides, so concurrent duplicates run exactly once. The
  losers answer from the row: the stored response (``Idempotent-Replayed: true``), 409
  ``conflict`` while the first still runs, 422 ``idempotency_key_reused`` for another body.
- ``after_request`` stores the answer, or releases the key for an answer worth retrying.
- ``teardown_request`` releases a key whose request ended in an exception before that.

What is stored: every 2xx and 4xx answer except 409 and 429 — the request ran (or was
refused for a reason that a retry would meet again: 402, 403, 422…), so a retry gets the same
answer and nothing runs twice. Not stored (the key is released, a retry runs again): 5xx —
upstream trouble, timeouts, our own failures, all of which cost nothing and may go away —
and 409/429, which say "not now". A key held by a request that died without releasing it
is free again once it is older than any request can run (:func:`abandoned_after`).

What is compared: the method, the path and the body as canonical JSON (keys sorted, no
spaces), hashed with SHA-256. The same object sent with its keys in another order or with
other spacing is the same request; the same key on another operation is not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import deque
from copy import deepcopy
from datetime import timedelta
from typing import Any

from apispec import BasePlugin
from flask import current_app, g, request
from flask_smorest import Blueprint

from api.errors import ApiError
from api.extensions import db
from api.operations import request_lifetime
from storage import idempotency as records

logger = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
#: 1 to 255 printable ASCII characters, the first and last not a space (HTTP drops spaces
#: around a header's value, so a key cannot start or end with one).
KEY_PATTERN = r"^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$"
_KEY = re.compile(KEY_PATTERN)
#: Headers of the first answer that a replay repeats. Its ``X-Request-Id`` and
#: ``RateLimit-*`` are the replaying request's own (the body keeps the first ``request_id``).
REPLAYED_HEADERS = ("X-Credits-Used", "X-Credits-Remaining", "Location")
#: 4xx answers that say "not now" rather than answering the request: never stored.
NOT_STORED = frozenset({409, 429})
#: Seconds added to a request's lifetime before a key still in flight counts as abandoned.
ABANDON_MARGIN_SECONDS = 60
#: Seconds between two purges of expired records by one API process.
PURGE_INTERVAL_SECONDS = 600


def install(blueprint: Blueprint) -> Blueprint:
    """Give every POST of ``blueprint`` Idempotency-Key handling (after its auth hooks)."""
    blueprint.before_request(_claim)
    blueprint.after_request(_settle)
    blueprint.teardown_request(_abandon)
    return blueprint


def replayed() -> bool:
    """Whether this request is answered with a stored response (its history line exists)."""
    return g.get("idempotent_replay", False)


def stored(status: int) -> bool:
    """Whether an answer with ``status`` is kept for replays (see the module docstring)."""
    return 200 <= status < 500 and status not in NOT_STORED


def request_hash() -> str:
    """What identifies the request: method, path and canonical JSON body."""
    body = json.dumps(request.get_json(silent=True), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def abandoned_after() -> timedelta:
    """How long a request can hold a key: its whole lifetime (the one its reservation's
    deadline is made of, so a retry never takes the key over while the first request could
    still capture) plus :data:`ABANDON_MARGIN_SECONDS`."""
    return request_lifetime() + timedelta(seconds=ABANDON_MARGIN_SECONDS)


#: Releases owed per process at most: keys whose release failed (the database was down),
#: freed again by the process's next claim. Beyond it, a key waits to count as abandoned.
MAX_OWED = 1000


def _owed() -> deque[records.Claimed]:
    return current_app.extensions.setdefault("webdata.idempotency_owed", deque(maxlen=MAX_OWED))


def _release(claimed: records.Claimed) -> None:
    """Free the key; if the database fails, the process owes the release (:func:`_pay`)."""
    try:
        records.release(db(), claimed)
    except Exception:
        logger.exception("Could not release the idempotency key of request %s; released at "
                         "this process's next claim", claimed.request_id)
        _owed().append(claimed)


def _pay() -> None:
    """The releases this process owes, tried again before it claims a key: after an outage
    a retry of a request answered 5xx then finds its key free, as docs/api.md (Idempotency)
    promises."""
    owed = _owed()
    for _ in range(len(owed)):
        claimed = owed.popleft()
        try:
            records.release(db(), claimed)
        except Exception:
            owed.append(claimed)
            return  # still failing: the next claim tries again


def _claim():
    if request.method != "POST" or HEADER not in request.headers:
        return None
    _pay()
    key = request.headers[HEADER]
    if not _KEY.match(key):
        raise ApiError("bad_request", f"{HEADER} must be 1 to 255 printable ASCII characters, "
                                      "not starting or ending with a space.")
    outcome = records.claim(db(), g.principal.account_id, key, request_hash(), g.request_id,
                            abandoned_after=abandoned_after())
    if isinstance(outcome, records.Claimed):
        g.idempotency_claim = outcome
        return None
    if isinstance(outcome, records.Replay):
        g.idempotent_replay = True
        return _replay(outcome.response)
    if isinstance(outcome, records.TookEffect):
        raise ApiError("conflict", f"The request with this {HEADER} ({outcome.request_id}) "
                                   "was carried out (and charged), but its answer could not "
                                   "be kept; it is not run again. Send a new key to run it "
                                   "again.")
    if isinstance(outcome, records.InFlight):
        raise ApiError("conflict", f"A request with this {HEADER} is still running; retry "
                                   "once it has finished.")
    raise ApiError("idempotency_key_reused", f"This {HEADER} was used in the last 24 hours "
                   "with another request (body or operation); use a new key.")


def _replay(response: records.StoredResponse):
    answer = current_app.response_class(response.body, status=response.status,
                                        mimetype="application/json")
    answer.headers.update(response.headers)
    answer.headers[REPLAYED_HEADER] = "true"
    return answer


def _settle(response):
    """Store the answer (or free the key); a failure here must not fail the answer itself."""
    claimed = g.pop("idempotency_claim", None)
    if claimed is None:
        return response
    try:
        if stored(response.status_code):
            headers = {name: response.headers[name] for name in REPLAYED_HEADERS
                       if name in response.headers}
            kept = records.complete(db(), claimed, records.StoredResponse(
                response.status_code, response.get_data(as_text=True), headers))
            if not kept:
                logger.warning("Request %s lost its idempotency key before it answered",
                               g.request_id)
        else:
            _release(claimed)
    except Exception:
        # Left in flight: retries get 409 until the key counts as abandoned (or, charged,
        # for good: storage.idempotency.TookEffect).
        logger.exception("Could not settle the idempotency key of request %s", g.request_id)
    _purge_now_and_then()
    return response


def _abandon(_exc: BaseException | None) -> None:
    """The request ended without an answer to store (an exception): free its key."""
    claimed = g.pop("idempotency_claim", None)
    if claimed is not None:
        _release(claimed)


def _purge_now_and_then() -> None:
    """Delete expired records at most every :data:`PURGE_INTERVAL_SECONDS` per process."""
    now = time.monotonic()
    last = current_app.extensions.get("webdata.idempotency_purged")
    if last is not None and now - last < PURGE_INTERVAL_SECONDS:
        return
    current_app.extensions["webdata.idempotency_purged"] = now
    try:
        purged = records.purge(db())
    except Exception:
        logger.exception("Could not purge expired idempotency records")
        return
    if purged:
        logger.info("Purged %d expired idempotency records", purged)


class IdempotencyDocs(BasePlugin):
    """Documents the above on every POST of the OpenAPI document (an apispec plugin, so no
    operation can be left out): the ``Idempotency-Key`` parameter, the 409, the replay
    header, and the idempotency meanings of 400 and 422."""

    PARAMETER = "IdempotencyKey"
    REPLAY_DOC = {
        "description": "`true` when this is the stored answer to an earlier request with the "
                       "same Idempotency-Key (nothing ran or was charged again).",
        "schema": {"type": "string", "enum": ["true"]},
    }
    MEANINGS = {
        400: f"Or the {HEADER} header is not 1 to 255 printable ASCII characters.",
        409: f"conflict: a request with the same {HEADER} is still running; retry once it "
             "has finished.",
        422: f"Or idempotency_key_reused: the {HEADER} was used in the last 24 hours with "
             "another body or operation.",
    }

    def init_spec(self, spec) -> None:
        super().init_spec(spec)
        spec.components.parameter(self.PARAMETER, "header", {
            "name": HEADER, "required": False,
            "description": (
                "Makes the request safe to retry. Within 24 hours the same key from the same "
                "account, with the same body (compared as canonical JSON) and operation, gets "
                "the first answer again with the header Idempotent-Replayed: true, and "
                "nothing runs or is charged again. Answers kept: 2xx and 4xx but 409 and 429; "
                "after a 5xx the key is free again. Another body: 422 "
                "idempotency_key_reused; while the first still runs: 409 conflict."),
            "schema": {"type": "string", "minLength": 1, "maxLength": 255,
                       "pattern": KEY_PATTERN},
        })
        spec.components.header(REPLAYED_HEADER, self.REPLAY_DOC)

    def operation_helper(self, path=None, operations=None, **kwargs) -> None:
        operation = (operations or {}).get("post")
        if operation is None:
            return
        operation.setdefault("parameters", []).append(self.PARAMETER)
        responses: dict[Any, dict] = operation["responses"]
        by_status = {int(status): status for status in responses if str(status).isdigit()}
        if 409 not in by_status and 422 in by_status:
            conflict = deepcopy(responses[by_status[422]])
            conflict["description"] = self.MEANINGS[409]
            conflict.get("headers", {}).pop(REPLAYED_HEADER, None)
            responses[409] = conflict
            by_status[409] = 409
        elif 409 in by_status:
            self._explain(responses[by_status[409]], self.MEANINGS[409])
        for status in (400, 422):
            if status in by_status:
                self._explain(responses[by_status[status]], self.MEANINGS[status])
        for status, name in by_status.items():
            if stored(status) and status not in (400, 401):
                responses[name].setdefault("headers", {})[REPLAYED_HEADER] = REPLAYED_HEADER
        operation["responses"] = {name: responses[name] for _, name in sorted(by_status.items())}

    @staticmethod
    def _explain(response: dict, meaning: str) -> None:
        response["description"] = f"{response.get('description', '').rstrip()} {meaning}".strip()
