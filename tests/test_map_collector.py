"""What a map keeps (crawler.extract.site_map): site, path rules, canonical form, once, limit,
search order."""

from __future__ import annotations

from crawler.extract.site_map import MapCollector

START = "https://www.example.com/start"


def test_only_the_site_canonical_and_once():
    kept = MapCollector(START, limit=10)
    assert kept.add("https://example.com/a?b=2&a=1#top", "page", "  A  page ")
    assert not kept.add("https://example.com:443/a?a=1&b=2&utm_source=x", "sitemap",
                        lastmod="2026-01-01")
    assert not kept.add("https://blog.example.com/x", "page")
    assert not kept.add("https://example.org/", "page")
    assert not kept.add("mailto:a@example.com", "page")
    answer = kept.answer([], [])
    assert [(link.url, link.title, link.lastmod, link.source) for link in answer.links] == [
        ("https://example.com/a?a=1&b=2", "A page", "2026-01-01", "page")]
    assert (answer.total_found, answer.truncated) == (1, False)


def test_subdomains_and_path_rules():
    kept = MapCollector(START, limit=10, include_subdomains=True,
                        include_paths=("^/docs/",), exclude_paths=("draft",))
    assert kept.add("https://blog.example.com/docs/a", "page")
    assert not kept.add("https://example.com/docs/draft-1", "page")
    assert not kept.add("https://example.com/blog/", "page")
    assert not kept.add("https://notexample.com/docs/a", "page")


def test_limit_is_exact_and_the_rest_counted():
    kept = MapCollector(START, limit=2)
    for n in range(5):
        kept.add(f"https://example.com/{n}", "sitemap")
    answer = kept.answer([], [])
    assert [link.url for link in answer.links] == ["https://example.com/0",
                                                   "https://example.com/1"]
    assert (answer.total_found, answer.truncated) == (5, True)


def test_search_ranks_whole_words_first_and_keeps_found_order_for_ties():
    kept = MapCollector(START, limit=10, search="Tide tables")
    kept.add("https://example.com/tideway", "page")  # part of the path: 1
    kept.add("https://example.com/other", "page", "Tide tables")  # title words: 4
    kept.add("https://example.com/tide", "page")  # path word: 2
    kept.add("https://example.com/tides", "page")  # part: 1, after /tideway
    kept.add("https://example.com/nothing", "page")
    answer = kept.answer([], [])
    assert [link.url.rsplit("/", 1)[1] for link in answer.links] == [
        "other", "tide", "tideway", "tides"]
    assert answer.total_found == 4
