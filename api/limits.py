"""Per-account request rate: the plan's ``requests_per_minute``, counted in Redis.

Uses ``limits`` (the library behind Flask-Limiter) directly, because the limit depends on the
authenticated account, known only after the auth hook. Sliding-window counters: cheap (two
keys per account) and without the burst a fixed window allows at its edges. Answers carry the
IETF ``RateLimit-*`` headers; a 429 also carries ``Retry-After``.
"""

from __future__ import annotations

import logging
import math
import time

from flask import g
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter

from api.errors import ApiError
from storage.accounts import Principal
from worker.queues import client_options

logger = logging.getLogger(__name__)


class AccountRateLimiter:
    def __init__(self, redis_url: str, timeout: float):
        self._limiter = SlidingWindowCounterRateLimiter(
            storage_from_string(redis_url, **client_options(timeout)))

    def check(self, principal: Principal) -> None:
        """Count this request; raise 429 ``rate_limited`` when over the plan's rate.

        If Redis cannot be reached the request goes through (logged): refusing every request
        would turn a counter outage into a full outage, and jobs report Redis trouble anyway —
        at once: ``g.redis_unreachable`` tells them not to wait for Redis a second time.

        The answer's ``RateLimit-*`` headers take a second round trip; an allowed request
        reads them only when they are asked for (:func:`rate_limit_headers`), which a billed
        request does while its job runs, not before.
        """
        item = RateLimitItemPerMinute(principal.requests_per_minute)
        try:
            allowed = self._limiter.hit(item, principal.account_id)
        except Exception as exc:
            logger.warning("Rate limiter unavailable, not limiting: %s", exc)
            g.redis_unreachable = True
            return
        g.rate_limit_window = (self, item, principal.account_id)
        if not allowed:
            headers = rate_limit_headers()
            reset = headers.get("RateLimit-Reset", "1")
            raise ApiError(
                "rate_limited",
                f"Over {item.amount} requests per minute for the {principal.plan} plan; "
                f"retry in {reset} s.",
                headers={**headers, "Retry-After": reset},
            )

    def headers(self, item: RateLimitItem, account_id: str) -> dict[str, str]:
        """The IETF ``RateLimit-*`` headers of ``account_id``'s window now. Raises for Redis."""
        stats = self._limiter.get_window_stats(item, account_id)
        reset = max(1, math.ceil(stats.reset_time - time.time()))
        return {
            "RateLimit-Limit": str(item.amount),
            "RateLimit-Remaining": str(max(0, stats.remaining)),
            "RateLimit-Reset": str(reset),
        }


def rate_limit_headers() -> dict[str, str]:
    """The request's ``RateLimit-*`` headers, read the first time they are asked for (every
    answer asks, ``api.factory._finish_request``); none for a request that was not counted, or when
    Redis fails now (logged: the answer is not at fault)."""
    if "rate_limit_headers" not in g:
        headers: dict[str, str] = {}
        window = g.pop("rate_limit_window", None)
        if window is not None:
            limiter, item, account_id = window
            try:
                headers = limiter.headers(item, account_id)
            except Exception as exc:
                logger.warning("Rate limit headers unavailable: %s", exc)
        g.rate_limit_headers = headers
    return g.rate_limit_headers
