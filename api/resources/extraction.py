"""The page operations (``/scrape``, ``/contacts``, ``/products``, ``/video-platform``, ``/map``):
one route each, made from its declaration in :data:`core.operations.PAGE_OPERATIONS`.

Each is one billed job on a warm worker (``api.operations.run_page_operation``): its price on
success, nothing on any failure. Its body is its URL and its options
(:func:`api.schemas.page_request_schema`); its answer, its item
(:func:`api.schemas.page_response_schema`); its OpenAPI entry, its summary and description.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import g
from flask_smorest import Blueprint

from api.auth import authenticated
from api.errors import ApiError
from api.openapi import BASE_PATH, PAGE, documented
from api.operations import refuse, run_page_operation
from api.schemas.pages import page_request_schema, page_response_schema
from core.operations import MAX_AGE_OPTION, PAGE_OPERATIONS, Operation

blp = authenticated(Blueprint("extraction", __name__, url_prefix=BASE_PATH,
                              description="Single-page operations: one URL, one credit."))


def answer(page: Operation, args: dict[str, Any]) -> Any:
    """Page operation ``page`` on ``args`` (its loaded request schema): its URL rule and the
    plan's caps on its options first (free refusals), then the billed job. The API's route
    and the console's pages (the Map page) both answer here."""
    extraction = page.extraction
    assert extraction is not None
    url = args["url"]
    rule = extraction.url_rule
    if rule is not None and not rule.accepts(url):
        raise refuse(page.name, ApiError(
            rule.error, rule.message, details={"url": url, "target_status": None}), url=url)
    for option in extraction.options:  # a plan's cap on a value (a map's limit)
        cap = getattr(g.principal, option.plan_cap) if option.plan_cap else None
        if cap is not None and args.get(option.name, 0) > cap:
            raise refuse(page.name, ApiError(
                "validation_error", f"Invalid request: check {option.name}.",
                errors={option.name: [f"At most {cap} on your plan ({option.plan_cap})."]}),
                url=url)
    return run_page_operation(page, url, args.get(MAX_AGE_OPTION.name, 0),
                              **extraction.option_values(args))


def _view(page: Operation) -> Callable[[dict[str, Any]], Any]:
    """The route's view of ``page``: :func:`answer`."""

    def view(args: dict[str, Any]) -> Any:
        return answer(page, args)

    view.__name__ = view.__qualname__ = page.name  # the endpoint's name
    view.__doc__ = f"{page.summary}\n\n{page.description}\n"
    return view


def _route(page: Operation) -> None:
    assert page.extraction is not None
    view = blp.arguments(page_request_schema(page.extraction))(_view(page))
    view = documented(blp, page.operation_id, page_response_schema(page), PAGE, billed=True,
                      descriptions=dict(page.errors), operation=page)(view)
    blp.route(page.path, methods=["POST"])(view)


for _page in PAGE_OPERATIONS:
    _route(_page)
