"""schemathesis against the app, in process: every operation, generated requests (valid and
invalid), and every answer checked against the OpenAPI document (no 5xx but the documented
ones, status codes and headers documented, bodies valid against their schemas).

The fuzzer's URLs cannot reach the Internet: the source policy refuses them, or DNS fails at
once (no network here); the search operations answer from the local SearXNG fake. Real pages
of the test site are checked too, since random URLs rarely get a 200.
"""

from __future__ import annotations

from collections.abc import Callable

import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import strategies as st
from schemathesis import GenerationMode

from api import create_app
from tests.conftest import Customer, make_config, new_customer

pytest_plugins = ["tests.support.fakes.fixtures"]

BASE = "/api/service/v1"
#: Per operation: few examples, a fixed seed (the suite must not be flaky) and no example
#: database left in the work tree.
SETTINGS = hypothesis.settings(
    max_examples=15, deadline=None, derandomize=True, database=None,
    suppress_health_check=list(HealthCheck),
)


#: Valid CSS selectors for the document's ``css-selector`` format (the options'
#: ``include_selectors``/``exclude_selectors``): a fuzzer's random text is rarely one.
schemathesis.openapi.format("css-selector", st.sampled_from([
    "nav", "div.ad", "#main > p", "ul li:nth-child(2n+1)", "a[href^='https']", "h1 ~ p",
    ":not(footer)", "table tr:first-child td", "*"]))


@schemathesis.hook
def before_load_schema(ctx, raw_schema):
    """The fuzzer leaves out the ``schema`` option (a selector schema): the document gives its
    shape and words, but not its rules across fields (``attribute`` only with some types,
    names unique in a level, selectors valid in the ``selector_type`` chosen), so a request
    the fuzzer calls valid would be refused. tests/test_record_schema.py and
    tests/test_api_formats.py cover it, valid and hostile."""
    for component in raw_schema.get("components", {}).get("schemas", {}).values():
        component.get("properties", {}).pop("schema", None)


@schemathesis.check
def valid_requests_pass_validation(ctx, response, case):
    """A request the document calls valid is never refused as ``validation_error``: the
    document says everything the validation checks."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code == 422:
        error = (response.json() or {}).get("error")
        assert error != "validation_error", f"a valid request refused: {response.text}"
    return None


@pytest.fixture(scope="module")
def fuzz_app(sqlite_url, redis_url, workers, provider_settings):
    """The normal app (workers, test site allowed) with the SearXNG fake for every search."""
    return create_app(make_config(sqlite_url, redis_url, **provider_settings["searxng"]))


@pytest.fixture(scope="module")
def fuzzer(fuzz_app) -> Customer:
    """Enough credits and rate for every generated request to reach the operation."""
    return new_customer(fuzz_app, credits=100_000, plan="enterprise")


@pytest.fixture(scope="module")
def api_schema(fuzz_app, fuzzer):
    config = schemathesis.Config.from_dict({
        # The document's bearer scheme, with the fuzzer's key: schemathesis sends it, and
        # knows when a request it generated goes without it.
        "auth": {"openapi": {"bearer": {"bearer": fuzzer.key}}},
        # 502, 503 and 504 are contract answers (target, provider or dependency trouble),
        # each documented where it applies; any other 5xx (a 500: a bug of ours) fails.
        "checks": {
            "not_a_server_error": {
                "expected-statuses": ["2xx", "3xx", "4xx", "502", "503", "504"]},
            # A schema-valid request may still be refused by the contract: 402 (balance),
            # 403 (source policy), 415 (not HTML), and 422 with a code other than
            # validation_error (unsupported_video, video_unavailable: see
            # valid_requests_pass_validation).
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "3xx", "401", "402", "403", "404", "409", "415",
                                      "422", "429", "5xx"]},
        },
    })
    return schemathesis.openapi.from_wsgi(f"{BASE}/openapi.json", fuzz_app, config=config)


#: Every operation of the document (tests/test_openapi.py checks the list is complete).
OPERATION_IDS = ["getHealth", "getAccount", "listActivity", "scrape", "findContacts",
                 "extractProducts", "getVideo", "searchWeb", "searchNews", "searchVideos"]
#: Valid requests for every operation, invalid ones for those with a parameter or a body.
FUZZ = [pytest.param(name, GenerationMode.POSITIVE, id=f"{name}-valid") for name in OPERATION_IDS]
FUZZ += [pytest.param(name, GenerationMode.NEGATIVE, id=f"{name}-invalid")
         for name in OPERATION_IDS if name not in {"getHealth", "getAccount"}]


@pytest.mark.parametrize(("operation_id", "mode"), FUZZ)
def test_every_operation_answers_as_documented(api_schema, operation_id, mode):
    """Hypothesis drives schemathesis' strategy for the operation (its pytest loader,
    ``from_fixture``, does not run under pytest 9); the checks are schemathesis' own."""
    operation = api_schema.find_operation_by_id(operation_id)
    strategy = operation.as_strategy(generation_mode=mode)
    if mode == GenerationMode.POSITIVE:
        # A cursor is an opaque token this API returned: any other string is schema-valid
        # but refused (422), as it should be. Real cursors: test_real_answers_match_the_document.
        strategy = strategy.filter(lambda case: "cursor" not in (case.query or {}))

    @SETTINGS
    @hypothesis.given(case=strategy)
    def fuzz(case):
        case.call_and_validate()

    fuzz()


@pytest.fixture(scope="module")
def call(api_schema, fuzzer) -> Callable:
    """Send one request as ``customer`` (default: the fuzzer) and validate the answer."""
    def run(method: str, path: str, body=None, query=None, customer=None, headers=None):
        operation = api_schema[path][method]
        case = operation.Case(query=query) if body is None else operation.Case(body=body)
        # The config's auth applies to generated cases only: send the key explicitly.
        return case.call_and_validate(headers=(customer or fuzzer).headers
                                      if headers is None else headers)

    return run


def test_real_answers_match_the_document(call, site):
    """The 200s with real data: random URLs almost never get one."""
    ok = [
        call("GET", "/healthz"),
        call("GET", f"{BASE}/account"),
        call("POST", f"{BASE}/scrape", {"url": f"{site}/article"}),
        call("POST", f"{BASE}/scrape", {"url": f"{site}/article", "include_links": False,
                                        "include_metadata": False}),
        call("POST", f"{BASE}/contacts", {"url": f"{site}/contact"}),
        call("POST", f"{BASE}/products", {"url": f"{site}/product"}),
        call("POST", f"{BASE}/video-platform",
             {"url": "https://www.youtube.com/watch?v=pUbLiC_vid1"}),
        call("POST", f"{BASE}/search", {"query": "tides"}),
        call("POST", f"{BASE}/search/news", {"query": "tides", "limit": 3}),
        call("POST", f"{BASE}/search/videos", {"query": "tides"}),
    ]
    first = call("GET", f"{BASE}/account/activity", query={"limit": 1})
    cursor = first.json()["next_cursor"]
    assert cursor  # the requests above are in the history
    rest = call("GET", f"{BASE}/account/activity", query={"cursor": cursor, "limit": 100})
    ok += [first, rest]
    assert [response.status_code for response in ok] == [200] * len(ok)
    errors = [
        call("POST", f"{BASE}/scrape", {"url": f"{site}/missing"}),
        call("POST", f"{BASE}/scrape", {"url": "http://127.0.0.1/"}),
        call("POST", f"{BASE}/video-platform", {"url": f"{site}/article"}),
        call("POST", f"{BASE}/search", {"query": "fake:error"}),
    ]
    assert [response.status_code for response in errors] == [502, 403, 422, 502]


def test_refusals_match_the_document(call, fuzz_app, site):
    """401, 402 and 429 with their documented headers (WWW-Authenticate, Retry-After…)."""
    scrape = f"{BASE}/scrape"
    assert call("POST", scrape, {"url": f"{site}/article"}, headers={}).status_code == 401
    broke = new_customer(fuzz_app, credits=0)
    assert call("POST", scrape, {"url": f"{site}/article"}, customer=broke).status_code == 402
    assert call("POST", f"{BASE}/search", {"query": "tides"}, customer=broke).status_code == 402
    hurried = new_customer(fuzz_app)  # free plan: 60 requests a minute
    statuses = [call("GET", f"{BASE}/account", customer=hurried).status_code
                for _ in range(61)]
    assert statuses == [200] * 60 + [429]
