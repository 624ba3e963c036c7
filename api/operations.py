"""The life of a billable single-page request, shared by every one-URL operation.

pre-check the URL → reserve credits → run the job on a warm worker → capture (success) or
release (any failure) → answer. Every path writes exactly one line of activity history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import current_app, g

from api.dispatch import run_interactive
from api.errors import ApiError
from api.extensions import db, redis, source_policy
from crawler.contract import PageStatus
from crawler.policy import PolicyRefusal
from storage import ledger

#: Fields of the page result every single-page response starts with.
COMMON_FIELDS = ("url", "final_url", "status_code", "fetched_at")
#: The operation each operation route is, by its path under the API's base path: history rows
#: carry these names and clients read them, so they are written out here rather than taken
#: from Python function names that a refactoring could rename.
OPERATIONS = {
    "/scrape": "scrape",
    "/contacts": "contacts",
    "/products": "products",
    "/video-platform": "video_platform",
    "/search": "search",
    "/search/news": "search_news",
    "/search/videos": "search_videos",
}


def request_charge(operation: str, url: str | None, amount: int) -> ledger.Charge:
    """The ledger charge of the request being served (its key is the request id).

    Making it claims the request's one line of history: every caller settles or records the
    charge, which writes that line (see :func:`history_claimed`).
    """
    charge = ledger.Charge(
        account_id=g.principal.account_id, key=f"request:{g.request_id}", amount=amount,
        operation=operation, request_id=g.request_id, url=url,
    )
    g.history_charge = charge
    return charge


def history_claimed() -> bool:
    """Whether the request's line of history is written (or being written) by its charge;
    if not, a refused operation request gets one after the fact (``api._finish_request``)."""
    return g.get("history_charge") is not None


def run_billed(
    operation: str, cost: int, work: Callable[[], dict[str, Any]], *, url: str | None = None,
) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Reserve ``cost`` credits, run ``work()``, capture on success, release on any failure.

    ``work`` returns the response fields after ``request_id``/``credits_used`` or raises
    ApiError. Returns (body, 200, headers); the request's one line of history is written here.
    """
    charge = request_charge(operation, url, cost)  # every path below writes its history
    try:
        ledger.reserve(db(), charge)
    except ledger.InsufficientCredits as exc:
        ledger.record_failure(db(), charge, "insufficient_credits")
        raise ApiError("insufficient_credits", str(exc)) from None
    try:
        fields = work()
    except ApiError as exc:
        ledger.release(db(), charge, exc.error)
        raise
    except BaseException:
        ledger.release(db(), charge, "internal_error")
        raise
    balance = ledger.capture(db(), charge)
    body = {"request_id": g.request_id, "credits_used": cost, **fields}
    headers = {"X-Credits-Used": str(cost), "X-Credits-Remaining": str(balance)}
    return body, 200, headers


def refuse(operation: str, error: ApiError, *, url: str | None = None, cost: int = 0) -> ApiError:
    """Record a request refused before any work (0 credits) and return the error to raise."""
    ledger.record_failure(db(), request_charge(operation, url, cost), error.error)
    return error


def run_page_operation(
    operation: str, job: str, url: str, *, cost: int = 1,
    common_fields: bool = True, **options: Any,
) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Run ``job(url, **options)`` on a warm worker, billed; (body, status, headers) or ApiError.

    ``job`` is the job function's dotted name (``"worker.jobs.scrape"``): the API process
    never imports the crawler, only the worker does.

    The body holds the page result's common fields (unless ``common_fields`` is false, for
    operations whose contract leaves them out) followed by the job's ``data``.
    """
    try:
        source_policy().check_url(url)
    except PolicyRefusal as exc:
        raise refuse(operation, ApiError(exc.code, exc.message,
                                         details={"url": url, "target_status": None}),
                     url=url, cost=cost) from None

    def work() -> dict[str, Any]:
        result = run_interactive(
            redis(), job, url, job_id=g.request_id,
            wait=current_app.config["WEBDATA"].job_wait_seconds, **options,
        )
        if result["status"] != PageStatus.SUCCEEDED:
            raise ApiError.from_result(result["error"] or {})
        fields = {name: result[name] for name in COMMON_FIELDS} if common_fields else {}
        return {**fields, **(result["data"] or {})}

    return run_billed(operation, cost, work, url=url)
