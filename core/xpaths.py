"""Users' XPath expressions (a record schema's selectors with ``selector_type: "xpath"``): the
part of XPath 1.0 that libxml2 runs in time linear in the page, checked before it is compiled.

Measured with lxml 6.1 (libxml2 2.14) on pages of 50,000 elements, or a tower of 250 nested
``div`` holding 10 MB of text (the crawler's largest page), each in one C call that holds the
GIL, so nothing can interrupt it:

- a second descendant step is quadratic: libxml2 merges what each context node finds into one
  set, comparing each new node with all found before: ``//*//*`` 6.6 s, ``//li//text()``
  3.9 s, ``//*/descendant::*`` 7.7 s. So a path descends (``//``, ``descendant::``,
  ``descendant-or-self::``) once in a whole expression, and only at its start, from one node;
- so is a union of overlapping sets (``//li | //li``: 4.0 s): ``|`` only joins whole
  expressions, which are evaluated one by one and merged by the caller;
- an element's string value is its whole text, and a tower holds it once per level:
  ``//*[contains(., 'q')]`` 1.4 s, with ``concat(., ., ., .)`` 39 s, ``translate(., …)`` 52 s.
  So a function's argument, a comparison's or a sum's operand is never a set of elements
  (``.``, ``td``): ``text()`` and ``@attribute`` are (``translate(text(), …)``: 0.15 s), and
  the functions that default to their context's whole text need an argument;
- comparing two node-sets compares every pair; an absolute path inside a predicate reads the
  page again for each node (``//*[. = //*]``: 26 s). Both refused, and a field's XPath starts
  at its record (``.//h2``): ``//h2`` would read the whole page again for each record;
- the axes that leave the subtree of the context (parent, ancestor, following, preceding, the
  siblings) are refused: from every element of a long list they read the rest of the list.

What is left costs, per element of the context's subtree, a bounded work per token and, per
character of its text, one pass per string operation: :attr:`XPathQuery.weight` and
:attr:`XPathQuery.text_weight`, which the caller charges before evaluating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from core.inputs import checked_text
from core.xpath_grammar import (
    ELEMENTS,
    FUNCTIONS,
    MAX_DESCENDANT_STEPS,
    MAX_NESTING,
    STRINGS,
    VALUE,
    Parser,
    XPathInvalid,
    branches,
)
from core.xpath_grammar import tokens as tokenised

__all__ = ["ELEMENTS", "FUNCTIONS", "MAX_DESCENDANT_STEPS", "MAX_NESTING", "MAX_XPATH_LENGTH",
           "STRINGS", "VALUE", "XPathInvalid", "XPathQuery", "parse_xpath"]

#: Characters in one expression.
MAX_XPATH_LENGTH = 500
@dataclass(frozen=True)
class XPathQuery:
    """A checked expression: ``text`` as written; ``branches`` its ``|``-joined parts, each
    compiled; ``kind`` what it gives (:data:`ELEMENTS`, :data:`STRINGS`, :data:`VALUE`).

    ``weight``: the quarter steps (a step is about 100 ns) it may take per element of its
    context's subtree: a token of the path one (measured: 30 ns an element), a token in a
    predicate or a function's arguments four (run for each element: ``[not(@x)]`` takes
    800 ns). ``text_weight``: the passes it may make over each character of that subtree's
    text. ``below``: whether it reads below its context at all (``@href``, ``self::a`` do
    not). ``firsts``: each branch compiled as ``(branch)[1]``, which gives only its first node
    (libxml2 may stop there), for a field that reads one; empty when a branch gives a value.
    """

    text: str
    kind: str
    weight: int
    text_weight: int
    below: bool
    branches: tuple[Any, ...] = field(compare=False, repr=False)
    firsts: tuple[Any, ...] = field(default=(), compare=False, repr=False)


def parse_xpath(text: object, *, absolute: bool = False) -> XPathQuery:
    """``text`` checked and compiled, or :class:`XPathInvalid` saying why. ``absolute``: whether
    the expression may start at the page's root (``//div``: a schema's ``base_selector``,
    evaluated once); a field's starts at its record."""
    text = checked_text(text, "an XPath", MAX_XPATH_LENGTH, XPathInvalid)
    tokens = tokenised(text)
    kinds, compiled, firsts, weight, text_weight, below = [], [], [], 0, 0, False
    for branch in branches(tokens):
        parser = Parser(branch, absolute)
        kind = parser.parse()
        if len(tokens) > len(branch) and kind == VALUE:
            raise XPathInvalid("| joins sets of elements or strings, not values.")
        source = text[branch[0][2]:branch[-1][3]]
        try:
            compiled.append(etree.XPath(source, regexp=False, smart_strings=False))
            if kind != VALUE:
                firsts.append(etree.XPath(f"({source})[1]", regexp=False, smart_strings=False))
        except (etree.XPathSyntaxError, ValueError) as exc:
            raise XPathInvalid(f"Not a valid XPath: {exc}.") from None
        kinds.append(kind)
        weight += len(branch) + 3 * parser.inner
        text_weight += parser.text_ops
        below = below or parser.below
    kind = kinds[0] if len(set(kinds)) == 1 else ELEMENTS
    return XPathQuery(text, kind, weight, text_weight, below, tuple(compiled),
                      tuple(firsts) if len(firsts) == len(compiled) else ())


