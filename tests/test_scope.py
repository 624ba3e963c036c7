"""The link-following rules of a crawl (``core.scope``): pure, no network."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, asdict

import pytest

from core.patterns import MAX_MEMORY, MAX_PATTERN_LENGTH, SYNTAX, pattern_errors
from core.scope import CrawlScope

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
    assert pattern_errors(["^/docs/", r"\?print=", "a" * MAX_PATTERN_LENGTH, "(?i)^/DOCS/",
                           r"(?P<lang>[a-z]{2})/", "[[:digit:]]+$", r"\bfaq\b"]) == {}
    errors = pattern_errors(["^/ok/", "(", "a" * (MAX_PATTERN_LENGTH + 1), "[z-a]",
                             "a{1001}", 7, ""])  # type: ignore[list-item]
    assert sorted(errors) == [1, 2, 3, 4, 5, 6]
    assert errors[1].startswith("Not a valid regular expression: missing ): (")
    assert str(MAX_PATTERN_LENGTH) in errors[2]
    assert "invalid character class range: z-a" in errors[3]  # RE2's words, not Python's
    assert "invalid repetition size: {1001}" in errors[4]  # RE2 repeats 1000 times at most
    assert errors[5] == "A pattern must be a string."
    assert errors[6] == "A pattern may not be empty."


@pytest.mark.parametrize(("pattern", "reason"), [
    (r"(a)\1", r"invalid escape sequence: \1"),  # a backreference
    ("(?P<x>a)(?P=x)", "invalid perl operator: (?P"),
    ("(?=x)", "invalid perl operator: (?="),  # lookarounds
    ("a(?!b)", "invalid perl operator: (?!"),
    ("(?<=a)b", "invalid perl operator: (?<="),
    ("a++", "bad repetition operator: ++"),  # possessive, atomic
    ("(?>a)", "invalid perl operator: (?>"),
    (r"/a\Z", r"invalid escape sequence: \Z (RE2 writes the end of the text \z)"),
])
def test_what_only_backtracking_can_do_is_refused_in_words(pattern: str, reason: str) -> None:
    """Python's re accepts these; RE2, which matches, does not: refused when validated, with
    the syntax that is accepted (never a 500, nor a crawl that fails when it starts)."""
    [message] = pattern_errors([pattern]).values()
    assert message.startswith(f"Not a valid regular expression: {reason}. ")
    assert f"RE2 syntax is accepted ({SYNTAX})" in message
    with pytest.raises(ValueError, match=r"include_paths: \[0\] Not a valid"):
        CrawlScope(START, 1, include_paths=(pattern,))


def test_a_pattern_whose_automaton_is_too_large_is_refused() -> None:
    """RE2's memory is bounded per pattern: a few characters cannot build a huge program."""
    errors = pattern_errors([r"\p{L}{300}", r"[^/]{1000}", "\ud800"])
    assert sorted(errors) == [0, 2]
    assert errors[0] == ("Too large a regular expression: RE2 would need more than "
                         f"{MAX_MEMORY >> 20} MiB to run it; use fewer or smaller repetitions.")
    assert "lone surrogate" in errors[2]  # JSON can carry one; RE2 reads UTF-8


def test_a_catastrophic_pattern_is_judged_like_any_other() -> None:
    """``(a+)+$`` backtracks exponentially in Python's re (hours at 40 ``a``); RE2 decides in
    one pass over the path, here 100,000 characters long."""
    rules = scope(include=("(a+)+$",), exclude=("(x+x+)+y",))
    assert rules.follows("https://example.com/aaa", 1)
    assert rules.follows("https://example.com/" + "a" * 100_000, 1)
    assert not rules.follows("https://example.com/" + "a" * 100_000 + "!", 1)
    assert rules.follows("https://example.com/" + "x" * 100_000 + "/aaa", 1)
    assert not rules.follows("https://example.com/" + "x" * 100_000 + "y/aaa", 1)


def test_a_link_rules_cannot_encode_is_still_judged() -> None:
    """A lone surrogate survives canonicalisation (no UTF-8 for it): refused by the pattern,
    not an exception in the worker."""
    rules = scope(include=("^/docs/",))
    assert rules.follows("https://example.com/docs/\ud800", 1)
    assert not rules.follows("https://example.com/blog/\ud800", 1)
