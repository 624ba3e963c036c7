"""URL canonicalisation and site identity (``core.canonical``): pure, no network."""

from __future__ import annotations

import pytest

from core.canonical import (
    TRACKING_PARAMETERS,
    canonical_url,
    is_tracking_parameter,
    same_site,
    site_key,
)


@pytest.mark.parametrize(("url", "expected"), [
    # w3lib: sorted query, fragment gone, blank values kept with their "="
    ("https://example.com/a?b=2&a=1#top", "https://example.com/a?a=1&b=2"),
    ("https://example.com/a?b&a=", "https://example.com/a?a=&b="),
    # case: scheme and host, never the path (paths are case-sensitive on most servers)
    ("HTTPS://Example.COM/Docs/Intro", "https://example.com/Docs/Intro"),
    # default ports dropped, others kept
    ("http://example.com:80/x", "http://example.com/x"),
    ("https://example.com:443/x", "https://example.com/x"),
    ("https://example.com:80/x", "https://example.com:80/x"),
    ("http://example.com:8080/x", "http://example.com:8080/x"),
    ("http://[2001:db8::1]:80/x", "http://[2001:db8::1]/x"),
    ("http://[2001:db8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
    # empty path
    ("https://example.com", "https://example.com/"),
    ("https://example.com?q=1", "https://example.com/?q=1"),
    # percent-encoding normalised: one spelling for the same bytes
    ("https://example.com/a b/%7Euser?q=é", "https://example.com/a%20b/~user?q=%C3%A9"),
    # surrounding whitespace from an href attribute
    ("  https://example.com/x\n", "https://example.com/x"),
    # userinfo kept as it is (rare, but another resource)
    ("http://user:pw@Example.com:80/", "http://user:pw@example.com/"),
])
def test_canonical_form(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


@pytest.mark.parametrize(("url", "expected"), [
    ("https://example.com/p?utm_source=news&utm_medium=mail&utm_campaign=x&id=7",
     "https://example.com/p?id=7"),
    ("https://example.com/p?utm_whatever_new=1", "https://example.com/p"),
    ("https://example.com/p?UTM_Source=x&Q=1", "https://example.com/p?Q=1"),
    ("https://example.com/p?gclid=abc&fbclid=def&page=2", "https://example.com/p?page=2"),
    ("https://example.com/p?mc_cid=1&mc_eid=2&msclkid=3&yclid=4&_ga=5",
     "https://example.com/p"),
    ("https://example.com/p?utm%5Fsource=x&a=1", "https://example.com/p?a=1"),  # encoded name
    # look-alikes are real parameters
    ("https://example.com/p?_gallery=2&utm=1&gclid_x=3",
     "https://example.com/p?_gallery=2&gclid_x=3&utm=1"),
])
def test_tracking_parameters_are_dropped(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


def test_tracking_parameter_names() -> None:
    assert {"gclid", "fbclid", "mc_cid", "mc_eid", "msclkid", "yclid", "_ga"} <= TRACKING_PARAMETERS
    assert is_tracking_parameter("utm_term") and is_tracking_parameter("GCLID")
    assert not is_tracking_parameter("id") and not is_tracking_parameter("utmost")


def test_one_page_one_canonical_url() -> None:
    """Every way a page links to the same page is one frontier entry."""
    spellings = [
        "https://example.com/docs?b=2&a=1",
        "https://EXAMPLE.com:443/docs?a=1&b=2#section-2",
        "https://example.com/docs?a=1&utm_source=feed&b=2&gclid=x",
    ]
    assert {canonical_url(url) for url in spellings} == {"https://example.com/docs?a=1&b=2"}


def test_international_hosts_become_punycode() -> None:
    assert canonical_url("https://Bücher.example/regal") == "https://xn--bcher-kva.example/regal"
    # IDNA 2008, as the policy and Twisted see it: faß.de is not fass.de (w3lib alone says so)
    assert canonical_url("https://faß.de/") == "https://xn--fa-hia.de/"
    assert canonical_url("https://xn--fa-hia.de/") == canonical_url("https://faß.de/")


def test_canonical_is_idempotent() -> None:
    url = "HTTP://www.Example.com:80/a b?z=1&utm_id=3&a=é#f"
    once = canonical_url(url)
    assert once == "http://www.example.com/a%20b?a=%C3%A9&z=1"
    assert canonical_url(once) == once


@pytest.mark.parametrize("garbage", [
    "", "   ", "/relative/path", "relative", "  mailto:someone@example.com ",
    "javascript:alert(1)", "data:text/html,hi", "ftp://example.com/file", "http://", "://",
    "http://example.com:99999/", "http://example.com:port/", "http://[::1/", "\x00\x01",
])
def test_what_cannot_be_canonicalised_comes_back_stripped(garbage: str) -> None:
    """Not an http(s) URL with a host and a valid port: the frontier refuses it as it is."""
    assert canonical_url(garbage) == garbage.strip()
    assert site_key(garbage) == ""
    assert not same_site(garbage, garbage)


@pytest.mark.parametrize("odd", [
    "http://exa mple.com/", "https://" + "a" * 70 + ".example/", "https://xn--/",
    "http://%zz/", "https://example.com/%", "https://example.com/?%%%=&&&=",
    "https://example.com/\ud800", "http://[fe80::1%25eth0]/",
])
def test_odd_hosts_and_paths_never_raise(odd: str) -> None:
    """Hosts no resolver would accept still get a spelling: the source policy refuses them."""
    result = canonical_url(odd)
    assert result.startswith(("http://", "https://"))
    assert canonical_url(result) == result
    assert site_key(odd) and same_site(odd, result)


@pytest.mark.parametrize(("url", "key"), [
    ("https://www.example.com/a", "example.com"),
    ("http://example.com/b", "example.com"),
    ("https://WWW.Example.COM:443/", "example.com"),
    ("http://example.com:80/", "example.com"),
    ("http://example.com:8080/", "example.com:8080"),
    ("https://example.com:80/", "example.com:80"),  # 80 is not https's default
    ("https://blog.example.com/", "blog.example.com"),
    ("https://www.www.example.com/", "www.example.com"),  # one www. only
    ("https://wwwexample.com/", "wwwexample.com"),
    ("https://www.bücher.example/", "xn--bcher-kva.example"),
    ("http://127.0.0.2:8800/x", "127.0.0.2:8800"),
    ("http://[2001:db8::1]:8080/", "[2001:db8::1]:8080"),
    ("https://example.com./", "example.com"),  # the root's dot
    ("/relative", ""),
    ("", ""),
])
def test_site_key(url: str, key: str) -> None:
    assert site_key(url) == key


def test_same_site() -> None:
    assert same_site("https://www.example.com/", "http://example.com/about")
    assert same_site("https://bücher.example/", "https://www.xn--bcher-kva.example/")
    assert not same_site("https://example.com/", "https://blog.example.com/")
    assert not same_site("https://example.com/", "https://example.com:8443/")
    assert not same_site("https://example.com/", "https://example.org/")
    assert not same_site("/a", "/a")  # no host, no site


@pytest.mark.parametrize("url", [
    "http://www.Example.com/a", "https://example.com:443/", "http://example.com:8080/x?b=1",
    "http://[::1]:9000/", "http://bücher.example/", "http://www.www.example.com/",
    "http://example.com./", "https://sub.example.co.uk/p", "ftp://example.com/"])
def test_the_site_of_a_canonical_url_from_its_parts_is_its_site(url):
    from urllib.parse import urlsplit

    from core.canonical import canonical_site_key

    canonical = canonical_url(url)
    assert canonical_site_key(urlsplit(canonical)) == site_key(canonical)
