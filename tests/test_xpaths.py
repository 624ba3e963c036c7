"""Users' XPath expressions (core.xpaths): the linear subset is accepted and compiled, what
libxml2 runs in quadratic time or worse is refused with the reason."""

from __future__ import annotations

import re

import lxml.html
import pytest

from core.xpaths import (
    ELEMENTS,
    MAX_NESTING,
    MAX_XPATH_LENGTH,
    STRINGS,
    VALUE,
    XPathInvalid,
    parse_xpath,
)


@pytest.mark.parametrize(("expression", "absolute", "kind"), [
    (".//h2", False, ELEMENTS),
    ("h2", False, ELEMENTS),
    ("./td[2]", False, ELEMENTS),
    (".", False, ELEMENTS),
    (".//a/@href", False, STRINGS),
    ("@data-id", False, STRINGS),
    ("text()", False, STRINGS),
    (".//span[@class='price']/text()", False, STRINGS),
    (".//li[position() <= 3]", False, ELEMENTS),
    ("(.//li)[last()]", False, ELEMENTS),
    (".//h2 | .//h3", False, ELEMENTS),
    ("*[.//a]", False, ELEMENTS),
    (".//tr[td/text() = 'Price']/td[2]", False, ELEMENTS),
    ("./descendant::x", False, ELEMENTS),
    (".//div[contains(@class, 'card') and not(@hidden)]", False, ELEMENTS),
    (".//*[starts-with(normalize-space(text()), 'A')]", False, ELEMENTS),
    ("concat(@a, '-', @b)", False, VALUE),
    ("translate(text(), 'ABC', 'abc')", False, VALUE),
    ("number(@data-price) * 2", False, VALUE),
    ('.//*[local-name() = "svg"]', False, ELEMENTS),
    ("//div[@class='product']", True, ELEMENTS),
    ("/html/body/div", True, ELEMENTS),
    ("//li[not(@id)] | //p", True, ELEMENTS),
])
def test_the_linear_subset_is_accepted(expression, absolute, kind):
    query = parse_xpath(expression, absolute=absolute)
    assert query.kind == kind
    assert query.text == expression


def test_brackets_nest_as_deep_as_allowed():
    assert parse_xpath("x" + "[x" * MAX_NESTING + "]" * MAX_NESTING).kind == ELEMENTS


def test_union_branches_are_compiled_apart_and_run_on_a_page():
    query = parse_xpath(".//h2 | .//h3")
    root = lxml.html.fromstring("<div><h3>b</h3><h2>a</h2></div>")
    assert len(query.branches) == 2
    assert [el.text for branch in query.branches for el in branch(root)] == ["a", "b"]


def test_weights_say_what_an_expression_reads():
    assert not parse_xpath("@href").below and not parse_xpath("self::a[@href]").below
    assert parse_xpath(".//a").below and parse_xpath("text()").below
    assert parse_xpath(".//a[contains(text(), 'x')]").text_weight == 1
    assert parse_xpath(".//a[translate(text(), 'a', 'b') = 'c']").text_weight == 17
    assert parse_xpath("concat(@a, @b, @c)").text_weight == 6  # concat copies as it goes


@pytest.mark.parametrize(("expression", "absolute", "reason"), [
    # a second descent: libxml2 merges each context's finds, comparing with all found before
    ("//*//*//*//*", True, "may descend (// or a descendant axis) once"),
    (".//div//h2", False, "may descend"),
    ("*/*//text()", False, "may descend"),  # once, but from many nodes
    (".//*[.//x]", False, "may descend"),
    ("./descendant::a/descendant::b", False, "may descend"),
    # axes that leave the subtree
    ("following-sibling::td", False, "may not use the following-sibling axis"),
    ("preceding::p", False, "may not use the preceding axis"),
    ("ancestor-or-self::div", False, "may not use the ancestor-or-self axis"),
    ("../a", False, "may not use the parent axis"),
    ("namespace::*", False, "Unsupported axis namespace::"),
    # a field starts at its record; the root only at the start of a base selector
    ("//h2", False, "A field's XPath starts at its record: write .//h2"),
    ("//*[. = //*]", True, "only at its beginning"),
    # unions only between whole expressions
    ("(.//a | .//b)", False, "| may only join whole expressions"),
    ("count(.//a) | .//b", False, "Unsupported function count()"),
    ("@a = 'x' | .//b", False, "| joins sets"),
    # an element's whole text, read again for each element tried
    ("contains(., 'x')", False, "The arguments of contains() may not be elements"),
    (".//td[. = 'Price']", False, "The operands of = may not be elements"),
    ("normalize-space()", False, "normalize-space() needs an argument here"),
    ("-.//a", False, "The operands of - may not be elements"),
    ("@a = @b", False, "between two node-sets compares every pair"),
    # the rest of the rules
    ("$x", False, "Variables ($name) are not supported"),
    ("re:test(@a, 'x')", False, "Unsupported function re:test()"),
    ("contains(@a)", False, "contains() takes 2 arguments, not 1"),
    ("name('x')", False, "name() takes a node-set"),
    ("comment()", False, "comment() selects no content"),
    ("svg:rect", False, "Namespace prefixes (svg:rect) are not supported"),
    ("'a'[1]", False, "a predicate applies to a node-set"),
    (".//a[", False, "it ends too early"),
    (".//a]", False, "unexpected ] at character 5"),
    ("'open", False, "unexpected \"'\" at character 1"),
    ("x" * (MAX_XPATH_LENGTH + 1), False, f"at most {MAX_XPATH_LENGTH} characters"),
    ("", False, "may not be empty"),
    (7, False, "must be a string"),
    (".//a[@x='\x00']", False, "Not a valid XPath"),
    ("(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1), False, "may nest at most"),
    ("x" + "[x" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), False, "may nest at most"),
    ("(" * 240 + "1" + ")" * 240, False, "may nest at most"),  # no RecursionError
    (".//a[@x='\ud800']", False, "Not a valid XPath"),
])
def test_refusals_say_why(expression, absolute, reason):
    with pytest.raises(XPathInvalid, match=re.escape(reason)):
        parse_xpath(expression, absolute=absolute)


@pytest.mark.parametrize("expression", [
    ".//*[not(@x)]", ".//li[position() = last()]", "(.//*)[last()]", ".//*/*/*",
    ".//*[contains(text(), 'q')]", ".//*[translate(text(), 'x', 'y') = 'q']",
    ".//*[" + " or ".join(f"@a{i} = 'q'" for i in range(30)) + "]",
    ".//*" + "[*]" * 150,
])
def test_the_worst_accepted_expressions_answer_on_a_huge_page(expression):
    """50,000 siblings and 255 levels of nesting: answered (what they cost is charged to the
    page's budget by crawler.extract.records, tested there)."""
    html = ("<html><body><ul>" + "<li>x</li>" * 50_000 + "</ul>" + "<div>" * 300 + "deep"
            + "</div>" * 300 + "</body></html>")
    root = lxml.html.fromstring(html)
    for branch in parse_xpath(expression).branches:
        assert isinstance(branch(root), list)
