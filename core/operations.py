"""The platform's operations, each declared once: the table everything else is derived from.

An operation is what a client asks for and the history lists: its name (the history's
``operation``), its route under the API's base path, its price and its series in the console's
usage chart. A *page* operation also has an :class:`Extraction`: what it makes of one fetched
page (its item, its options, whether collections can run it). From :data:`OPERATIONS` come the
API's routes, request and response schemas and OpenAPI entries (``api.resources.extraction``),
the job a worker runs (``worker.jobs``), the spiders ``scrapy crawl`` knows
(``crawler.spiders``), the extractors a collection may run, the export columns
(``api.exports``), the history's names (``api.operations``) and the usage series
(``storage.usage``). The extraction function itself is bound to its name in the crawler
(``crawler.extract.registry.extracts``), which this framework-free table never imports.

Adding a page operation: docs/design.md, "Adding an operation".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from core.agent_tools import MARKDOWN, AgentTool
from core.cache import MAX_AGE
from core.items.contacts import Contacts
from core.items.map import SiteMap
from core.items.page import Page
from core.items.products import Products
from core.items.records import Records
from core.items.video import Video
from core.options import (
    BOOLEAN,
    FORMAT_LIST,
    FORMATS,
    PATH_PATTERNS,
    SCHEMA,
    SELECTOR_LIST,
    Kind,
    OptionError,
    choice,
    text,
    whole_number,
)
from core.video_platform import parse_video_url


@dataclass(frozen=True)
class Option:
    """A page operation's option besides its URL: a request field (and a collection's, when
    the operation is collectable), a keyword argument of its job and of its extraction
    function, a spider's ``-a``. ``kind`` is the rule of its values (:mod:`core.options`);
    ``description`` its OpenAPI words. A list default is a tuple (the table is immutable)
    and given out as a list. A ``required`` option has no default: without it the request
    is a 422 (``scrapy crawl``: a failed page). ``plan_cap`` names the plan field
    (``storage.models.Plan``, ``max_map_urls``) a request's value may not exceed: above it the
    API answers a 422 naming the option (its kind's range is the rule everywhere else)."""

    name: str
    default: Any
    kind: Kind = BOOLEAN
    description: str = ""
    required: bool = False
    plan_cap: str | None = None

    @property
    def default_value(self) -> Any:
        return list(self.default) if isinstance(self.default, tuple) else self.default


@dataclass(frozen=True)
class UrlRule:
    """What a page operation asks of its URL before anything is fetched or charged: a URL
    ``accepts`` refuses is answered 422 ``error`` with ``message`` (free, in the history)."""

    accepts: Callable[[str], bool]
    error: str
    message: str


@dataclass(frozen=True)
class Extraction:
    """What a page operation makes of one fetched page.

    ``name`` is the spider ``scrapy crawl`` knows, a collection's ``extract`` when
    ``collectable``, and the key its extraction function is registered under. ``item`` is its
    answer's ``data`` (:mod:`core.items`); ``title`` names its OpenAPI schemas
    (``<title>Response``). ``own_spider``: its spider makes requests of its own beyond the page
    (the video's Data API call), so it is not the generic one.
    """

    name: str
    item: type
    title: str
    options: tuple[Option, ...] = ()
    collectable: bool = False
    own_spider: bool = False
    url_rule: UrlRule | None = None

    @property
    def data_keys(self) -> tuple[str, ...]:
        """The top-level keys of its ``data``: its item's fields, in order."""
        return tuple(spec.name for spec in fields(self.item))

    def option_values(self, given: dict[str, Any]) -> dict[str, Any]:
        """Its options as given (defaults for the missing ones), nothing else."""
        return {option.name: given.get(option.name, option.default_value)
                for option in self.options}


@dataclass(frozen=True)
class Operation:
    """One operation. ``summary`` and ``description`` are its OpenAPI entry's (Markdown),
    ``operation_id`` its ``operationId``, ``errors`` what its error statuses say there beyond
    the common words ((status, text) pairs). ``common_fields``: its answer starts with the page
    result's ``url``, ``final_url``, ``status_code``, ``fetched_at``. ``usage`` is its series in
    the console's chart (None: not a request for data)."""

    name: str
    path: str
    cost: int
    usage: str | None = None
    extraction: Extraction | None = None
    operation_id: str = ""
    summary: str = ""
    description: str = ""
    errors: tuple[tuple[int, str], ...] = ()
    common_fields: bool = True
    #: Its tools for agents (:mod:`core.agent_tools`); None: one of its own name when it is a
    #: request for data (it has a usage series), none otherwise.
    tools: tuple[AgentTool, ...] | None = field(default=None, compare=False)

    @property
    def agent_tools(self) -> tuple[AgentTool, ...]:
        if self.tools is not None:
            return self.tools
        return (AgentTool(self.name),) if self.usage else ()

    @property
    def price(self) -> str:
        """What it costs, in words (a tool's description says it)."""
        if self.usage == "collections":
            return "1 credit per page stored, nothing for a failed one"
        if not self.cost:
            return "free"
        return f"{self.cost} credit{'s' if self.cost > 1 else ''} on success, nothing on failure"


#: ``max_age``, a request field of every page operation (the page cache, :mod:`core.cache`):
#: not an option of its extraction, never given to its spider.
MAX_AGE_OPTION = Option(
    "max_age", 0, whole_number(0, MAX_AGE),
    "Seconds: an answer of the page cache at most this old is accepted instead of a fetch "
    "(same operation, options and canonical URL; fetched for any account). Default 0: always "
    "fetch. At most 2592000 (30 days). A cached answer costs what a fetched one costs, and "
    "says `cached: true`.")

_SCHEMA_WORDS = (
    "A selector schema: `base_selector` (one record per element it matches; none: the page is "
    "one record), `selector_type` (`css`, the default, or `xpath`), `fields` (each `name`, "
    "`selector`, `type` one of text, attribute, html, number, url, nested, list, `attribute`, "
    "`default`, and `fields` for nested and list). At most 64 KB, 8 levels, 500 fields; a bad "
    "one is a 422 naming where (`schema.fields[2].selector`).")
#: Records by a selector schema: an extraction of collections (``extract: "schema"``) and of
#: ``scrapy crawl schema``, without an operation of its own (``/scrape`` reads the same records
#: with its ``schema`` option).
SCHEMA_RECORDS = Extraction(
    name="schema", item=Records, title="Records", collectable=True,
    options=(Option("schema", None, SCHEMA, _SCHEMA_WORDS, required=True),))

SCRAPE = Operation(
    name="scrape", path="/scrape", cost=1, usage="scrape", operation_id="scrape",
    tools=(AgentTool("scrape", defaults=MARKDOWN),),
    extraction=Extraction(
        name="page", item=Page, title="Scrape", collectable=True, options=(
            Option("include_links", True), Option("include_metadata", True),
            Option("formats", ("text",), FORMAT_LIST,
                   "What to answer the content as, any of `text` (readable text), `markdown`, "
                   "`html` (the content as clean HTML), `raw_html` (the page as fetched); "
                   "each format's field is null when not asked for."),
            Option("only_main_content", True, BOOLEAN,
                   "`false`: the whole `<body>` (without scripts, styles and hidden "
                   "elements) instead of the readable main content."),
            Option("include_selectors", (), SELECTOR_LIST,
                   "CSS selectors: only the elements they match, in document order, are the "
                   "content (then `only_main_content` does not apply). At most 20 of at most "
                   "500 characters; `:has()` and `:contains()` are refused."),
            Option("exclude_selectors", (), SELECTOR_LIST,
                   "CSS selectors: the elements they match are removed before anything is "
                   "extracted. Same limits as `include_selectors`."),
            Option("schema", None, SCHEMA, _SCHEMA_WORDS + " Its records are the answer's "
                   "`records`."))),
    summary="Extract one page.",
    description="Fetches exactly one HTML page (each redirect hop checked against source "
                "policy and\nrobots.txt) and returns its title, readable text, links and "
                "metadata. 1 credit on success;\nfailures cost nothing.")
CONTACTS = Operation(
    name="contacts", path="/contacts", cost=1, usage="contacts", operation_id="findContacts",
    extraction=Extraction(name="contacts", item=Contacts, title="Contacts", collectable=True),
    summary="Find the contacts on one page.",
    description="Emails (also Cloudflare-protected and written-out ones), phones (E.164, "
                "validated), social\nprofiles, the organisation, and same-site pages worth "
                "reading next (listed, not fetched).\nAt most 50 per category. 1 credit, also "
                "when nothing is found.")
PRODUCTS = Operation(
    name="products", path="/products", cost=1, usage="products",
    operation_id="extractProducts",
    extraction=Extraction(name="products", item=Products, title="Products", collectable=True),
    summary="Read the products on one page.",
    description="Product JSON-LD (also in `@graph`, `ItemList`, `ProductGroup.hasVariant`); "
                "when there\nis none, microdata, RDFa, then OpenGraph product tags. At most "
                "20 products, 20 offers each;\nevery field present, null when missing. "
                "1 credit.")
VIDEO_PLATFORM = Operation(
    name="video_platform", path="/video-platform", cost=1, usage="video",
    operation_id="getVideo", common_fields=False, tools=(AgentTool("video_metadata"),),
    extraction=Extraction(name="video", item=Video, title="Video", own_spider=True,
                          url_rule=UrlRule(
                              accepts=lambda url: parse_video_url(url) is not None,
                              error="unsupported_video",
                              message="Not a link to a video of the supported platform "
                                      "(YouTube).")),
    errors=((422, "validation_error (a field), unsupported_video (not a link to a video of the "
                  "supported platform) or video_unavailable (private, deleted, age-gated or not "
                  "embeddable)."),),
    summary="Metadata of one public, embeddable video.",
    description="Accepts watch, youtu.be, shorts, embed, live, mobile, music and nocookie "
                "links; anything\nelse is refused with `unsupported_video` before any fetch. "
                "The video file is never\ndownloaded. 1 credit.")
#: The most URLs one map answers with, whatever the plan (the largest plan's
#: ``max_map_urls``); a plan's own cap is checked by the API.
MAP_MAX_LIMIT = 100_000
#: Link hops from the start page a map may fetch to read their links.
MAP_MAX_HOPS = 2
MAP = Operation(
    name="map", path="/map", cost=1, usage="map", operation_id="mapSite",
    extraction=Extraction(name="map", item=SiteMap, title="Map", own_spider=True, options=(
        Option("limit", 5000, whole_number(1, MAP_MAX_LIMIT),
               "The most URLs to answer with; at most the plan's `max_map_urls` (free 5,000, "
               "standard 50,000, enterprise 100,000), a 422 above it.",
               plan_cap="max_map_urls"),
        Option("search", None, text(200),
               "Words: only URLs whose path, title or sitemap metadata hold one of them, best "
               "matches first."),
        Option("sitemap", "include", choice("include", "only", "skip"),
               "`include`: sitemaps, feeds and links; `only`: sitemaps alone; `skip`: no "
               "sitemaps, feeds and links only."),
        Option("include_subdomains", False, BOOLEAN,
               "`true`: URLs of the site's subdomains too (`blog.example.com` for "
               "`example.com`)."),
        Option("include_paths", (), PATH_PATTERNS,
               "RE2 patterns searched in a URL's path + query: when given, only URLs one "
               "matches (a crawl's rule, same limits)."),
        Option("exclude_paths", (), PATH_PATTERNS,
               "RE2 patterns: URLs one matches are left out."),
        Option("discover_links", 1, whole_number(0, MAP_MAX_HOPS),
               "Link hops from the start page fetched only to read their links (at most 20 "
               "pages a hop); 0: the sitemaps, feeds and the start page's links only."))),
    summary="List the URLs of a site.",
    description="Reads the site's sitemaps (robots.txt `Sitemap:` lines, else `/sitemap.xml` "
                "and\n`/sitemap_index.xml`; indexes, gzip and text sitemaps), the feeds the "
                "start page links to\nand the links of the start page and of a few pages "
                "near it; pages are listed, not\nextracted. 1 credit on success.")

SEARCH = Operation(name="search", path="/search", cost=5, usage="search")
SEARCH_NEWS = Operation(name="search_news", path="/search/news", cost=5, usage="search")
SEARCH_VIDEOS = Operation(name="search_videos", path="/search/videos", cost=5, usage="search")
#: A collection's creation; its pages are charged 1 credit each, on lines of their own.
COLLECTION = Operation(
    name="collection", path="/collections", cost=0, usage="collections", tools=(
        AgentTool("crawl", fixed={"mode": "crawl"}, hidden=("urls",), required=("url",),
                  defaults=MARKDOWN, defaults_with={"extract": "page"}),
        AgentTool("batch", fixed={"mode": "batch"}, required=("urls",), hidden=(
            "url", "max_pages", "max_depth", "include_paths", "exclude_paths", "use_sitemap",
            "remove_repeated_blocks"), defaults=MARKDOWN, defaults_with={"extract": "page"})))
COLLECTION_CANCEL = Operation(name="collection_cancel",
                              path="/collections/<collection_id>/cancel", cost=0)
WEBHOOK_SECRET = Operation(name="webhook_secret", path="/account/webhook-secret", cost=0)
#: A change of the account's settings (``PATCH /account``: low balance, webhook URL).
ACCOUNT_UPDATE = Operation(name="account_update", path="/account", cost=0)
#: A monitor's creation, change and deletion; its runs are collections, on lines of their own.
MONITOR = Operation(name="monitor", path="/monitors", cost=0)
MONITOR_UPDATE = Operation(name="monitor_update", path="/monitors/<monitor_id>", cost=0)
MONITOR_DELETE = Operation(name="monitor_delete", path="/monitors/<monitor_id>", cost=0)

#: Every operation of the history, in the order the API documents them.
OPERATIONS: tuple[Operation, ...] = (
    SCRAPE, CONTACTS, PRODUCTS, VIDEO_PLATFORM, MAP, SEARCH, SEARCH_NEWS, SEARCH_VIDEOS,
    COLLECTION, COLLECTION_CANCEL, WEBHOOK_SECRET, ACCOUNT_UPDATE, MONITOR, MONITOR_UPDATE,
    MONITOR_DELETE,
)
#: Each operation by its name; the page operations, and each by its extraction's name.
BY_NAME = {operation.name: operation for operation in OPERATIONS}
PAGE_OPERATIONS = tuple(operation for operation in OPERATIONS if operation.extraction)
BY_EXTRACTION = {operation.extraction.name: operation for operation in PAGE_OPERATIONS
                 if operation.extraction is not None}
EXTRACTIONS: dict[str, Extraction] = {
    **{name: operation.extraction for name, operation in BY_EXTRACTION.items()
       if operation.extraction is not None},
    SCHEMA_RECORDS.name: SCHEMA_RECORDS}
#: What each page of a collection may give (``extract``), in the order the API documents.
COLLECTION_EXTRACTS = tuple(name for name, extraction in EXTRACTIONS.items()
                            if extraction.collectable)
#: The options a collection may give, of the extractions it may run (each takes its own).
COLLECTION_OPTIONS: dict[str, Option] = {
    option.name: option for name in COLLECTION_EXTRACTS for option in EXTRACTIONS[name].options}
#: The fields of a page's ``data`` that are formats (:data:`core.options.FORMATS`).
FORMAT_FIELDS = FORMATS


def option_errors(extract: str, given: dict[str, Any]) -> dict[str, str]:
    """Option name → message for each of ``given`` (JSON values) that extraction ``extract``
    does not take or that its kind refuses, and each it requires that is missing; ``{}``
    when all are good."""
    own = {option.name: option for option in EXTRACTIONS[extract].options}
    errors: dict[str, str] = {name: "Missing data for required field." for name, option
                              in own.items() if option.required and given.get(name) is None}
    for name, value in given.items():
        if name not in own:
            errors[name] = f"Not an option of extract {extract}."
            continue
        try:
            own[name].kind.check(value)
        except OptionError as exc:
            entries = "".join(f" [{index}] {message}" for index, message in exc.errors.items())
            errors[name] = f"{exc}{entries}"
    return errors


#: The history's operation of each route a POST creates with, by its path under the API's
#: base path (what a refused POST is recorded as).
BY_PATH = {operation.path: operation.name for operation in OPERATIONS
           if operation not in (ACCOUNT_UPDATE, MONITOR_UPDATE, MONITOR_DELETE)}
#: The console chart's series of each history operation.
USAGE = {operation.name: operation.usage for operation in OPERATIONS if operation.usage}


def operation(name: str) -> Operation:
    """The operation called ``name`` (KeyError if none is)."""
    return BY_NAME[name]


def page_operation(extraction: str) -> Operation:
    """The page operation whose extraction is called ``extraction`` (KeyError if none is)."""
    return BY_EXTRACTION[extraction]
