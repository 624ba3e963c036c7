"""One list of error codes: what the crawler produces, what the API answers, what the contract
(docs/api.md) says."""

from __future__ import annotations

import pytest

from api.errors import DEFAULT_CODE, STATUS, ApiError
from core.contract import ErrorCode
from core.policy import PolicyRefusal
from crawler.exceptions import CrawlError

#: The error table of the first contract (HTTP status, error): a code added to the contract
#: must be added to ErrorCode, to api.errors.STATUS and to docs/api.md's table (tests/test_docs.py).
CONTRACT = {
    "bad_request": 400, "unauthorized": 401, "insufficient_credits": 402, "source_policy": 403,
    "robots_disallowed": 403, "not_found": 404, "conflict": 409, "expired": 410,
    "too_many_urls": 413, "unsupported_content": 415, "validation_error": 422,
    "idempotency_key_reused": 422, "unsupported_video": 422, "video_unavailable": 422,
    "rate_limited": 429, "collection_limit": 429, "fetch_failed": 502, "target_http_error": 502,
    "page_too_large": 502, "search_provider_error": 502, "search_not_configured": 503,
    "unavailable": 503, "timeout": 504,
}
#: Codes the API answers with beyond that first table (werkzeug's 405 and 413, the one 500).
EXTRA = {"method_not_allowed": 405, "body_too_large": 413, "internal_error": 500,
         "monitor_limit": 403}


def _subclasses(cls: type) -> set[type]:
    return {sub for child in cls.__subclasses__() for sub in {child, *_subclasses(child)}}


def test_every_crawler_code_has_an_http_status():
    codes = {cls.code for cls in {CrawlError, *_subclasses(CrawlError), PolicyRefusal}}
    assert len(codes) > 8
    assert codes <= set(STATUS)


def test_the_api_table_is_the_contract_and_the_enum():
    assert set(STATUS) == set(ErrorCode)
    assert {code: STATUS[ErrorCode(code)] for code in CONTRACT} == CONTRACT
    assert {str(code): status for code, status in STATUS.items()} == {**CONTRACT, **EXTRA}
    assert set(DEFAULT_CODE.values()) <= set(STATUS)


def test_an_unknown_code_is_refused():
    assert ApiError("timeout", "slow").status == 504
    with pytest.raises(ValueError):
        ApiError("no_such_code", "?")
