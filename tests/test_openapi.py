"""The generated OpenAPI document says what the contract (docs/api.md) says, because generated
clients are built from it: every always-present field required, every error status and
header documented, one stable operationId per operation, nothing left over. And the docs
page works without the Internet."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from api import create_app
from tests.conftest import make_config

BASE = "/api/service/v1"
#: operationId of every operation; billable ones are charged on success.
OPERATIONS = {
    ("get", "/healthz"): "getHealth",
    ("get", f"{BASE}/account"): "getAccount",
    ("get", f"{BASE}/account/activity"): "listActivity",
    ("post", f"{BASE}/account/webhook-secret"): "rotateWebhookSecret",
    ("post", f"{BASE}/scrape"): "scrape",
    ("post", f"{BASE}/contacts"): "findContacts",
    ("post", f"{BASE}/products"): "extractProducts",
    ("post", f"{BASE}/video-platform"): "getVideo",
    ("post", f"{BASE}/map"): "mapSite",
    ("post", f"{BASE}/search"): "searchWeb",
    ("post", f"{BASE}/search/news"): "searchNews",
    ("post", f"{BASE}/search/videos"): "searchVideos",
    ("post", f"{BASE}/collections"): "createCollection",
    ("get", f"{BASE}/collections"): "listCollections",
    ("get", f"{BASE}/collections/{{collection_id}}"): "getCollection",
    ("post", f"{BASE}/collections/{{collection_id}}/cancel"): "cancelCollection",
    ("get", f"{BASE}/collections/{{collection_id}}/results"): "listCollectionResults",
    ("get", f"{BASE}/collections/{{collection_id}}/export"): "exportCollectionResults",
    ("get", f"{BASE}/collections/{{collection_id}}/skipped"): "listCollectionSkipped",
    ("get", f"{BASE}/collections/{{collection_id}}/changes"): "listCollectionChanges",
    ("post", f"{BASE}/monitors"): "createMonitor",
    ("get", f"{BASE}/monitors"): "listMonitors",
    ("get", f"{BASE}/monitors/{{monitor_id}}"): "getMonitor",
    ("patch", f"{BASE}/monitors/{{monitor_id}}"): "updateMonitor",
    ("patch", f"{BASE}/account"): "updateAccount",
    ("delete", f"{BASE}/monitors/{{monitor_id}}"): "deleteMonitor",
}
#: The error statuses of the collection operations beyond those of every operation.
COLLECTION_ERRORS = {
    "createCollection": {"402", "403"},
    "listCollections": {"422"},
    "getCollection": {"404"},
    "cancelCollection": {"404"},
    "listCollectionResults": {"404", "410", "422"},
    "exportCollectionResults": {"404", "409", "410", "422"},
    "listCollectionSkipped": {"404", "410", "422"},
    "listCollectionChanges": {"404", "409", "410", "422"},
    "createMonitor": {"403"},
    "getMonitor": {"404"},
    "updateMonitor": {"400", "402", "404", "413", "422"},
    "deleteMonitor": {"404"},
    "updateAccount": {"400", "413", "422"},
}
PAGE_OPERATIONS = {"scrape", "findContacts", "extractProducts", "getVideo", "mapSite"}
SEARCH_OPERATIONS = {"searchWeb", "searchNews", "searchVideos"}
BILLABLE = PAGE_OPERATIONS | SEARCH_OPERATIONS

_PAGE = ["request_id", "credits_used", "url", "final_url", "status_code", "fetched_at"]
_WEB_RESULT = ["position", "url", "title", "snippet"]
_ENGAGEMENT = ["views", "likes", "comments"]
#: The fields the first contract listed for each response object ("Every field listed is
#: always present").
CONTRACT = {
    "Health": ["status", "redis", "database"],
    "Error": ["code", "status", "error", "message", "request_id", "errors"],
    "ScrapeResponse": [*_PAGE, "title", "text", "markdown", "html", "raw_html", "language",
                       "links", "metadata", "records"],
    "Link": ["url", "text", "rel", "internal"],
    "Metadata": ["description", "canonical_url", "author", "published_at", "modified_at",
                 "site_name", "image", "keywords", "open_graph", "twitter", "json_ld",
                 "microdata", "meta"],
    "ContactsResponse": [*_PAGE, "emails", "phones", "social_links", "organization",
                         "suggested_pages"],
    "Email": ["value", "source_url", "found_in"],
    "Phone": ["value", "raw", "type", "source_url", "found_in"],
    "SocialLink": ["platform", "url", "handle", "source_url"],
    "Organization": ["name", "url", "logo", "address"],
    "ProductsResponse": [*_PAGE, "products"],
    "Product": ["source", "name", "description", "url", "sku", "mpn", "gtin", "brand",
                "category", "color", "images", "aggregate_rating", "offers"],
    "Rating": ["rating_value", "review_count", "best_rating"],
    "Offer": ["price", "currency", "availability", "item_condition", "price_valid_until",
              "seller", "url", "sku"],
    "VideoResponse": ["request_id", "credits_used", "video_id", "url", "title", "description",
                      "published_at", "duration_seconds", "channel", "thumbnails", "tags",
                      "category", "is_live", "is_family_safe", "embeddable", "engagement",
                      "captions", "related_videos", "source"],
    "Channel": ["id", "name", "url"],
    "Thumbnail": ["url", "width", "height"],
    "Engagement": _ENGAGEMENT,
    "Captions": ["status", "tracks"],
    "CaptionTrack": ["language", "name", "auto_generated"],
    "RelatedVideo": ["video_id", "url", "title", "channel", "duration_seconds"],
    "MapResponse": ["request_id", "credits_used", "url", "final_url", "status_code",
                    "fetched_at", "links", "sitemaps", "feeds", "total_found", "truncated"],
    "MapLink": ["url", "title", "lastmod", "source"],
    "SearchResponse": ["request_id", "credits_used", "query", "results"],
    "NewsSearchResponse": ["request_id", "credits_used", "query", "results"],
    "VideoSearchResponse": ["request_id", "credits_used", "query", "results"],
    "WebResult": _WEB_RESULT,
    "NewsResult": [*_WEB_RESULT, "source", "published_at"],
    "VideoResult": [*_WEB_RESULT, "channel", "duration_seconds", "thumbnail", "published_at",
                    "engagement"],
    "Account": ["id", "name", "plan", "credits"],
    "Plan": ["name", "requests_per_minute", "max_batch_urls", "max_crawl_pages",
             "max_running_collections"],
    "Credits": ["balance"],
    "ActivityPage": ["activity", "next_cursor"],
    "Activity": ["id", "at", "operation", "credits", "status", "request_id", "collection_id",
                 "url"],
    "Collection": ["id", "mode", "extract", "status", "stop_reason", "created_at", "started_at",
                   "finished_at", "expires_at", "progress", "credits_used", "webhook"],
    "WebhookDelivery": ["status", "attempts", "last_status"],
    "WebhookSecret": ["secret", "previous_secret_expires_at"],
    "Progress": ["total", "done", "succeeded", "failed", "robots_blocked"],
    "Result": ["url", "final_url", "status", "status_code", "fetched_at", "error", "data"],
    "ResultsPage": ["results", "next_cursor"],
    "CollectionPage": ["collections", "next_cursor"],
}
#: Fields added beyond that first contract (always present and required all the same).
ADDITIONS = {
    "Plan": ["max_concurrent_requests",  # a per-account cap on requests in flight
             "max_map_urls",  # the most a map may answer with (issue 29)
             "max_monitors"],  # monitors (issue 30)
    "Collection": ["monitor_id"],  # the monitor a collection is a run of (issue 30)
    "Health": ["workers", "cron"],  # ready means a worker listens
    "Progress": ["skipped",  # the URLs seen and not fetched, by reason (issue 29)
                 "changes"],  # change tracking's counts (issue 30)
    "Result": ["change"],  # change tracking (issue 30)
    "SkipCounts": ["robots", "excluded_path", "not_included", "depth", "off_site", "duplicate",
                   "limit", "policy", "cancelled"],
    "Skipped": ["url", "reason", "duplicate_of"],
    "SkippedPage": ["skipped", "next_cursor"],
    "PageChange": ["url", "status", "fetched_at", "previous_fetched_at", "diff"],  # issue 30
    "ChangesPage": ["changes", "next_cursor"],
    # answers of the page cache (issue 30): on every page operation, and marked in the history
    **{name: ["cached", "cached_at"] for name in (
        "ScrapeResponse", "ContactsResponse", "ProductsResponse", "VideoResponse",
        "MapResponse")},
    "Account": ["low_balance_threshold", "webhook_url"],  # account events (issue 31)
    "Activity": ["cached",
                 "channel"],  # how the request came: api, console, mcp (issue 31)
}


@pytest.fixture(scope="module")
def docs_app(sqlite_url, redis_url):
    return create_app(make_config(sqlite_url, redis_url))


@pytest.fixture(scope="module")
def spec(docs_app) -> dict[str, Any]:
    response = docs_app.test_client().get(f"{BASE}/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def operations(spec) -> Iterator[tuple[str, str, dict]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method != "parameters":  # the path's own (``{collection_id}``)
                yield method, path, operation


def success(operation: dict) -> str:
    """The status of an operation's success answer (200; 202 for what runs in the
    background)."""
    return next(status for status in operation["responses"] if status.startswith("2"))


def resolve(spec, node: dict) -> dict:
    while "$ref" in node:
        kind, name = node["$ref"].split("/")[-2:]
        node = spec["components"][kind][name]
    return node


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def test_every_operation_has_its_stable_operation_id(spec):
    found = {(method, path): op.get("operationId") for method, path, op in operations(spec)}
    assert found == OPERATIONS
    assert len(set(found.values())) == len(found)


def test_only_healthz_goes_without_a_key(spec):
    assert spec["security"] == [{"bearer": []}]
    for _, path, operation in operations(spec):
        if path == "/healthz":
            assert operation["security"] == []
            assert set(operation["responses"]) == {"200", "503"}
        else:
            assert "security" not in operation, path  # the document's bearer applies


def test_every_operation_documents_its_error_answers(spec):
    for method, _, operation in operations(spec):
        name = operation["operationId"]
        if name == "getHealth":
            continue
        expected = {success(operation), "401", "429", "503"}
        if method == "post":
            expected |= {"400", "409", "413", "422"}  # 409: a key in flight; 413: MAX_BODY_BYTES
        if name == "listActivity":
            expected.add("422")
        if name in BILLABLE:
            expected.add("402")
        if name in PAGE_OPERATIONS:
            expected |= {"403", "415", "502", "504"}
        if name in SEARCH_OPERATIONS:
            expected.add("502")
        expected |= COLLECTION_ERRORS.get(name, set())
        assert set(operation["responses"]) == expected, name
        for status, response in operation["responses"].items():
            schema = response["content"]["application/json"]["schema"]
            if status != success(operation):
                assert schema == {"$ref": "#/components/schemas/Error"}, (name, status)
                assert response["description"]


def test_every_answer_documents_its_headers(spec):
    for _, _, operation in operations(spec):
        name = operation["operationId"]
        for status, response in operation["responses"].items():
            headers = set(response.get("headers", {}))
            assert "X-Request-Id" in headers, (name, status)
            if name != "getHealth" and status != "401":
                assert {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} <= headers
            assert ("Retry-After" in headers) == (status == "429"), (name, status)
            billed_200 = name in BILLABLE and status == "200"
            assert ({"X-Credits-Used", "X-Credits-Remaining"} <= headers) == billed_200
            for header in response.get("headers", {}).values():
                assert "schema" in resolve(spec, header)
    retry_after = spec["components"]["headers"]["Retry-After"]
    assert retry_after["required"] is True
    assert retry_after["schema"]["type"] == "integer"


def test_every_contract_field_is_documented_and_required(spec):
    schemas = spec["components"]["schemas"]
    for name, fields in CONTRACT.items():
        schema = schemas[name]
        assert set(fields) <= set(schema["properties"]), name
        assert set(fields) <= set(schema["required"]), name
        added = ADDITIONS.get(name, [])
        assert set(added) <= set(schema["required"]), name
        if name != "Error":  # Error also has the optional ``details``
            assert set(schema["properties"]) == {*fields, *added}, name


#: Objects of a success answer whose fields a request chooses: none is required.
SELECTED = {"#/components/schemas/SelectedResult"}  # a result of a request with ``fields``


def test_every_object_of_a_success_answer_has_all_its_fields_required(spec):
    """Also the objects the contract does not spell out field by field, and those added later;
    but those whose fields a request chooses, which have the properties of another and none
    required."""
    seen: set[str] = set()
    todo = [ref for _, _, op in operations(spec)
            for ref in refs(op["responses"][success(op)])]
    while todo:
        ref = todo.pop()
        if not ref.startswith("#/components/schemas/") or ref in seen:
            continue
        seen.add(ref)
        schema = resolve(spec, {"$ref": ref})
        required = set(schema.get("required", []))
        assert required == (set() if ref in SELECTED else set(schema["properties"])), ref
        todo.extend(refs(schema))
    assert "#/components/schemas/ScrapeResponse" in seen and "#/components/schemas/Offer" in seen
    assert seen >= SELECTED
    selected = spec["components"]["schemas"]["SelectedResult"]["properties"]
    assert selected == spec["components"]["schemas"]["Result"]["properties"]


def test_nullable_fields_say_so(spec):
    schemas = spec["components"]["schemas"]
    assert schemas["ScrapeResponse"]["properties"]["title"]["type"] == ["string", "null"]
    organization = schemas["ContactsResponse"]["properties"]["organization"]
    assert {"type": "null"} in organization["anyOf"]
    assert schemas["ActivityPage"]["properties"]["next_cursor"]["type"] == ["string", "null"]


def test_every_component_is_referenced(spec):
    referenced: set[str] = set()
    todo = list(refs(spec["paths"]))
    while todo:
        ref = todo.pop()
        if ref in referenced:
            continue
        referenced.add(ref)
        todo.extend(refs(resolve(spec, {"$ref": ref})))
    for kind, components in spec["components"].items():
        if kind == "securitySchemes":
            continue
        for name in components:
            assert f"#/components/{kind}/{name}" in referenced, (kind, name)


def test_docs_page_and_its_assets_are_served_by_us(docs_app):
    client = docs_app.test_client()
    page = client.get(f"{BASE}/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    # No other host: every URL the page names is a path on this server.
    assert not re.search(r"(?:https?:)?//[\w.-]", html), html
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert {asset.rsplit("/", 1)[-1] for asset in assets} == {
        "swagger-ui.css", "swagger-ui-bundle.js", "init.js"}
    for asset in assets:
        assert asset.startswith(f"{BASE}/docs/"), asset
        response = client.get(asset, buffered=True)
        assert response.status_code == 200, asset
        assert len(response.data) > 200, asset
    assert "SwaggerUIBundle(" in client.get(f"{BASE}/docs/init.js",
                                            buffered=True).get_data(as_text=True)
    spec_url = re.search(r'data-spec-url="([^"]+)"', html).group(1)
    assert client.get(spec_url).get_json()["openapi"] == "3.1.0"
    assert client.get(f"{BASE}/docs/assets/../../openapi.json").status_code == 404
    assert client.get(f"{BASE}/docs/assets/no-such-file.js").status_code == 404


def test_the_export_documents_its_formats_and_csv_columns(spec):
    """Each format's media type on the 200, the file's headers, and the CSV columns of each
    extract spelled out in the description (they are fixed: a client may rely on them)."""
    from api.exports import DATA_KEYS, csv_columns

    operation = spec["paths"][f"{BASE}/collections/{{collection_id}}/export"]["get"]
    answer = operation["responses"]["200"]
    # text first: a generator reading one media type per answer reads every format as text
    assert list(answer["content"]) == ["text/csv", "application/x-ndjson", "application/json"]
    # results whole, or with the keys `fields` named; then what `include` adds
    assert answer["content"]["application/json"]["schema"]["items"] == {"anyOf": [
        {"$ref": f"#/components/schemas/{name}"}
        for name in ("Result", "ExportedSkipped", "ExportedRemoved", "SelectedResult")]}
    assert {"Content-Disposition", "Content-Encoding"} <= set(answer["headers"])
    format_ = next(p for p in operation["parameters"] if p["name"] == "format")
    assert format_["required"] and format_["schema"]["enum"] == ["json", "jsonl", "csv"]
    text = " ".join(operation["description"].split())
    for extract in DATA_KEYS:
        columns = csv_columns(extract)
        assert ", ".join(f"`{c}`" for c in columns[7:]) in text.replace(
            " (each only when the collection's `formats` asked for it)", "").replace(
            " (only with a `schema`)", ""), extract
    assert ", ".join(f"`{c}`" for c in csv_columns("page")[:5]) in text


def test_no_default_is_a_python_object_s_text(spec):
    """A default the document gives is one a client can send back: never the text of a
    Python object (``frozenset()``), which a generated client would send and get a 422 for."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "default" in node:
                found.append(node["default"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    assert found and not [value for value in found if isinstance(value, str) and (
        value.startswith(("frozenset(", "set(", "<")) or value.endswith(")"))]


def test_no_query_parameter_offers_null(spec):
    """A query string cannot carry null: an optional filter is one type (a generated client
    made three enumerations of ``status`` when its schema also offered null)."""
    for _, path, operation in operations(spec):
        for parameter in operation.get("parameters", ()):
            parameter = resolve(spec, parameter)
            if parameter["in"] == "query":
                schema = parameter["schema"]
                assert "null" not in schema["type"] and None not in schema.get("enum", ()), (
                    path, parameter["name"])
                assert schema.get("default", "") is not None, (path, parameter["name"])
    results = spec["paths"][f"{BASE}/collections/{{collection_id}}/results"]["get"]
    status = next(p for p in results["parameters"] if p["name"] == "status")
    assert status["schema"] == {"type": "string", "enum": ["succeeded", "failed"]}
