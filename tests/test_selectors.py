"""Users' CSS selectors (core.selectors): the same elements as lxml's cssselect translation,
in time linear in the page, refused with a reason when they cannot be."""

from __future__ import annotations

import random

import lxml.html
import pytest
from cssselect import GenericTranslator

from core.selectors import (
    MAX_SELECTOR_LENGTH,
    Matcher,
    SelectorBudgetExceeded,
    SelectorInvalid,
    parse_selector,
    selector_errors,
)

SELECTORS = [
    "div", "div p", ".a", "div > .b", "p + span", "li ~ li", "#x", "a[href^=http]",
    "[lang|=en]", "*:first-child", "span:last-child", "li:nth-child(2n+1)",
    "p:nth-last-child(2)", "div:nth-of-type(odd)", "a:only-child", ":not(div)",
    "div:not(.a) span", "ul > li:first-of-type ~ li", ":is(p, span) a", "[data-k~=v1]",
    "[class*=a]", "[class$=b]", "div:empty", "* *", "div, p.a", "li:only-of-type",
    "span:nth-last-of-type(1)", "a:not([href])", "[id!=x]", ":where(ul) li:nth-child(-n+2)",
]
TAGS = ("div", "p", "span", "a", "li", "ul")


def _random_element(rng: random.Random, depth: int = 0) -> str:
    tag = rng.choice(TAGS)
    attributes = "".join(filter(None, (
        rng.choice(["", ' class="a"', ' class="b"', ' class="a b"']),
        rng.choice(["", ' id="x"', ' id="y"']),
        rng.choice(["", ' href="http://q"', ' lang="en-US"', ' data-k="v1 v2"']))))
    children = "".join(_random_element(rng, depth + 1)
                       for _ in range(rng.randint(0, 4 if depth < 4 else 0)))
    return f"<{tag}{attributes}>{rng.choice(['', 't'])}{children}</{tag}>"


def test_same_elements_as_lxml_on_random_pages():
    rng = random.Random(7)
    translator = GenericTranslator()
    for _ in range(60):
        root = lxml.html.fromstring(
            "<html><body>" + "".join(_random_element(rng) for _ in range(5)) + "</body></html>")
        matcher = Matcher(root)
        for selector in SELECTORS:
            assert matcher.select(parse_selector(selector)) == root.xpath(
                translator.css_to_xpath(selector)), selector


def test_outermost_matches_in_document_order():
    root = lxml.html.fromstring(
        "<html><body><div class='k'><p class='k'>in</p></div><p>x</p><p class='k'>b</p>"
        "</body></html>")
    found = Matcher(root).select_outermost([parse_selector(".k")])
    assert [el.tag for el in found] == ["div", "p"]
    assert found[1].text == "b"


@pytest.mark.parametrize("selector", [
    "li:nth-child(2n)", "li ~ li", "li + li", "div div", "* *", "*:nth-of-type(2n)",
    " ".join(["div"] * 40), ":not(li):not(td)"])
def test_hostile_selectors_on_a_huge_page_are_answered(selector):
    """50,000 siblings (lxml's translation of li:nth-child(2n) takes seconds on them) and
    255 levels of nesting: each answered, by a bounded count of element visits."""
    html = ("<html><body><ul>" + "<li>x</li>" * 50_000 + "</ul>" + "<div>" * 5_000 + "deep"
            + "</div>" * 5_000 + "</body></html>")
    matcher = Matcher(lxml.html.fromstring(html))
    assert isinstance(matcher.select(parse_selector(selector)), list)


def test_the_budget_stops_a_page_that_needs_too_many_visits():
    root = lxml.html.fromstring("<html><body>" + "<p>x</p>" * 1_000 + "</body></html>")
    matcher = Matcher(root, max_steps=10_000)
    with pytest.raises(SelectorBudgetExceeded, match="element visits"):
        for _ in range(20):
            matcher.select(parse_selector("body p p p p"))


@pytest.mark.parametrize(("selector", "reason"), [
    ("", "may not be empty"),
    ("   ", "may not be empty"),
    (7, "must be a string"),
    ("div[", "Not a valid CSS selector"),
    ("p::before", "Pseudo-elements"),
    ("a:hover", "Unsupported pseudo-class :hover"),
    ("p:contains('x')", "Unsupported pseudo-class :contains()"),
    ("div:has(> p)", ":has() is not supported"),
    ("li:nth-child(foo)", "Not a valid :nth-child() argument"),
    ("x" * (MAX_SELECTOR_LENGTH + 1), f"at most {MAX_SELECTOR_LENGTH} characters"),
])
def test_refusals_say_why(selector, reason):
    with pytest.raises(SelectorInvalid, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_selector(selector)


def test_errors_are_named_by_index():
    errors = selector_errors(["nav", "div[", "main"])
    assert list(errors) == [1]
    assert "Not a valid CSS selector" in errors[1]
