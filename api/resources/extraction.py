"""The single-page operations: ``/scrape``, ``/contacts``, ``/products``, ``/video-platform``.

Each is one billed job on a warm worker (``api.operations.run_page_operation``): 1 credit on
success, nothing on any failure.
"""

from __future__ import annotations

from flask_smorest import Blueprint

from api.auth import authenticated
from api.errors import ApiError
from api.openapi import BASE_PATH, PAGE, documented
from api.operations import refuse, run_page_operation
from api.schemas import (
    ContactsResponseSchema,
    ProductsResponseSchema,
    ScrapeRequestSchema,
    ScrapeResponseSchema,
    UrlRequestSchema,
    VideoResponseSchema,
)
from core.video_platform import parse_video_url

blp = authenticated(Blueprint("extraction", __name__, url_prefix=BASE_PATH,
                              description="Single-page operations: one URL, one credit."))


@blp.route("/scrape", methods=["POST"])
@documented(blp, "scrape", ScrapeResponseSchema, PAGE, billed=True)
@blp.arguments(ScrapeRequestSchema)
def scrape(args: dict):
    """Extract one page.

    Fetches exactly one HTML page (each redirect hop checked against source policy and
    robots.txt) and returns its title, readable text, links and metadata. 1 credit on success;
    failures cost nothing.
    """
    return run_page_operation(
        "scrape", "worker.jobs.scrape", args["url"],
        include_links=args["include_links"], include_metadata=args["include_metadata"],
    )


@blp.route("/contacts", methods=["POST"])
@documented(blp, "findContacts", ContactsResponseSchema, PAGE, billed=True)
@blp.arguments(UrlRequestSchema)
def contacts(args: dict):
    """Find the contacts on one page.

    Emails (also Cloudflare-protected and written-out ones), phones (E.164, validated), social
    profiles, the organisation, and same-site pages worth reading next (listed, not fetched).
    At most 50 per category. 1 credit, also when nothing is found.
    """
    return run_page_operation("contacts", "worker.jobs.contacts", args["url"])


@blp.route("/products", methods=["POST"])
@documented(blp, "extractProducts", ProductsResponseSchema, PAGE, billed=True)
@blp.arguments(UrlRequestSchema)
def products(args: dict):
    """Read the products on one page.

    Product JSON-LD (also in `@graph`, `ItemList`, `ProductGroup.hasVariant`); when there
    is none, microdata, RDFa, then OpenGraph product tags. At most 20 products, 20 offers each;
    every field present, null when missing. 1 credit.
    """
    return run_page_operation("products", "worker.jobs.products", args["url"])


@blp.route("/video-platform", methods=["POST"])
@documented(blp, "getVideo", VideoResponseSchema, PAGE, billed=True, descriptions={
    422: "validation_error (a field), unsupported_video (not a link to a video of the "
         "supported platform) or video_unavailable (private, deleted, age-gated or not "
         "embeddable)."})
@blp.arguments(UrlRequestSchema)
def video_platform(args: dict):
    """Metadata of one public, embeddable video.

    Accepts watch, youtu.be, shorts, embed, live, mobile, music and nocookie links; anything
    else is refused with `unsupported_video` before any fetch. The video file is never
    downloaded. 1 credit.
    """
    url = args["url"]
    if parse_video_url(url) is None:
        raise refuse("video_platform", ApiError(
            "unsupported_video", "Not a link to a video of the supported platform (YouTube).",
            details={"url": url, "target_status": None}), url=url)
    return run_page_operation("video_platform", "worker.jobs.video", url, common_fields=False)
