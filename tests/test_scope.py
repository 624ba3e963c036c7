"""The link-following rules of a crawl (``crawler.scope``): pure, no network."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, asdict

import pytest

from crawler.scope import MAX_PATTERN_LENGTH, CrawlScope, pattern_errors

START = "https://www.example.com/docs/"


def scope(max_depth: int = 3, include: tuple[str, ...] = (),
          exclude: tuple[str, ...] = ()) -> CrawlScope:
    return CrawlScope(START, max_depth, include, exclude)


def test_same_site_only() -> None:
    rules = scope()
    assert rules.follows("https://www.example.com/docs/a", 1)
    assert rules.follows("https://example.com/about", 1)  # www. and the bare host: one site
    assert rules.follows("http://example.com/about", 1)  # the scheme is no other site
    assert not rules.follows("https://blog.example.com/docs/a", 1)
    assert not rules.follows("https://example.org/docs/a", 1)
    assert not rules.follows("https://example.com:8443/docs/a", 1)


def test_http_and_https_only() -> None:
    rules = scope()
    for url in ("ftp://www.example.com/docs/a", "mailto:docs@example.com",
                "javascript:void(0)", "/docs/relative", "", "http://", "https://www.example.com:x/"):
        assert not rules.follows(url, 1), url


def test_depth_counts_link_hops() -> None:
    rules = scope(max_depth=2)
    deep = "https://www.example.com/docs/a/b/c/d/e/f/g"  # path depth is not link depth
    assert rules.follows(deep, 1) and rules.follows(deep, 2)
    assert not rules.follows(deep, 3)
    assert not scope(max_depth=0).follows("https://www.example.com/docs/a", 1)


def test_include_paths_match_path_and_query() -> None:
    rules = scope(include=("^/docs/", r"[?&]lang=en\b"))
    assert rules.follows("https://example.com/docs/install", 1)
    assert rules.follows("https://example.com/faq?lang=en", 1)  # via the query
    assert not rules.follows("https://example.com/blog/post", 1)
    assert not rules.follows("https://example.com/faq?lang=english", 1)


def test_exclude_paths_win_over_include() -> None:
    rules = scope(include=("^/docs/",), exclude=(r"\?print=", "^/docs/old/"))
    assert rules.follows("https://example.com/docs/a?page=2", 1)
    assert not rules.follows("https://example.com/docs/a?print=1", 1)
    assert not rules.follows("https://example.com/docs/old/a", 1)
    only_exclude = scope(exclude=("^/tag/",))
    assert only_exclude.follows("https://example.com/blog/", 1)
    assert not only_exclude.follows("https://example.com/tag/python", 1)


def test_patterns_see_the_canonical_url() -> None:
    """Sorted query, no fragment, no tracking parameters: one URL, one verdict."""
    rules = scope(include=(r"^/docs/a\?a=1&b=2$",), exclude=("utm_", "#"))
    assert rules.follows("https://example.com/docs/a?b=2&a=1&utm_source=x#part", 1)
    assert not rules.follows("https://example.com/docs/a?b=2", 1)


def test_the_start_url_is_always_admitted() -> None:
    """Even when the patterns would refuse it: a crawl fetches at least what it was asked."""
    rules = CrawlScope(START, 0, include_paths=("^/blog/",), exclude_paths=("^/docs/",))
    assert rules.follows(START, 0)
    assert rules.follows("https://WWW.example.com:443/docs/#intro", 0)  # same canonical URL
    assert not rules.follows("https://www.example.com/docs/other", 0)  # refused by patterns
    assert not rules.follows("https://www.example.com/blog/a", 1)  # beyond max_depth 0


def test_scope_is_a_frozen_hashable_value() -> None:
    rules = CrawlScope(START, 2, ["^/docs/"], ["x"])  # type: ignore[arg-type]  # lists from JSON
    assert rules.include_paths == ("^/docs/",) and rules.exclude_paths == ("x",)
    assert rules == CrawlScope(START, 2, ("^/docs/",), ("x",))
    assert hash(rules) == hash(CrawlScope(START, 2, ("^/docs/",), ("x",)))
    assert asdict(rules) == {"start_url": START, "max_depth": 2,
                             "include_paths": ("^/docs/",), "exclude_paths": ("x",)}
    with pytest.raises(FrozenInstanceError):
        rules.max_depth = 5  # type: ignore[misc]


def test_a_bad_pattern_fails_when_the_scope_is_built() -> None:
    with pytest.raises(ValueError, match=r"exclude_paths: \[1\]"):
        CrawlScope(START, 1, exclude_paths=("ok", "(unclosed"))


def test_pattern_errors() -> None:
    assert pattern_errors([]) == {}
    assert pattern_errors(["^/docs/", r"\?print=", "a" * MAX_PATTERN_LENGTH]) == {}
    errors = pattern_errors(["^/ok/", "(", "a" * (MAX_PATTERN_LENGTH + 1), "[z-a]",
                             "a{4294967296}", 7])  # type: ignore[list-item]
    assert sorted(errors) == [1, 2, 3, 4, 5]
    assert errors[1].startswith("Not a valid regular expression: missing )")
    assert str(MAX_PATTERN_LENGTH) in errors[2]
    assert "bad character range" in errors[3]
    assert "repetition number is too large" in errors[4]  # OverflowError, not re.error
    assert errors[5] == "A pattern must be a string."
