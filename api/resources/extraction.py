"""``POST /scrape``: title, readable text, links and metadata of one page (1 credit)."""

from __future__ import annotations

from flask_smorest import Blueprint

from api.auth import authenticated
from api.operations import run_page_operation
from api.schemas import ErrorSchema, ScrapeRequestSchema, ScrapeResponseSchema
from worker import jobs

blp = authenticated(Blueprint("extraction", __name__, url_prefix="/api/service/v1",
                              description="Single-page extraction."))


@blp.route("/scrape", methods=["POST"])
@blp.arguments(ScrapeRequestSchema)
@blp.response(200, ScrapeResponseSchema)
@blp.alt_response(402, schema=ErrorSchema, description="Balance too low.")
@blp.alt_response(403, schema=ErrorSchema, description="source_policy or robots_disallowed.")
@blp.alt_response(415, schema=ErrorSchema, description="The target is not HTML.")
@blp.alt_response(502, schema=ErrorSchema, description="fetch_failed, target_http_error, "
                                                       "page_too_large.")
@blp.alt_response(504, schema=ErrorSchema, description="The target or the worker was too slow.")
def scrape(args: dict):
    """Extract one page.

    Fetches exactly one HTML page (each redirect hop checked against source policy and
    robots.txt) and returns its title, readable text, links and metadata. 1 credit on success;
    failures cost nothing.
    """
    return run_page_operation(
        "scrape", jobs.scrape, args["url"],
        include_links=args["include_links"], include_metadata=args["include_metadata"],
    )
