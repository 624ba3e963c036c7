"""Records read from one page by a record schema (:mod:`core.record_schema`): the ``data`` of a
schema extraction. A pure function on saved HTML, like every extractor.

Bounded by one budget per page, :class:`core.selectors.Matcher`'s element visits
(:data:`core.selectors.MAX_STEPS`: one to two seconds of work, measured), which everything
spends: each CSS selector is matched once over the whole page, and a field keeps the matches
inside its record by their document-order indexes (a binary search: a matcher per record per
field would be quadratic); each XPath call is charged before it runs for the elements and the
text of the subtree it starts from (:class:`core.xpaths.XPathQuery`'s weights); reading a text
or an HTML fragment is charged for its subtree. Past the budget,
:class:`~core.selectors.SelectorBudgetExceeded`: the page fails cleanly instead of holding a
worker for minutes. The answer is bounded too: :data:`MAX_RECORDS` records,
:data:`MAX_LIST_ITEMS` items a list, :data:`MAX_ANSWER_CHARS` characters in all (records that
nest in each other would repeat the page's text in each), else :class:`AnswerTooLarge`.

A field's selector finds elements strictly inside the element it reads from (CSS: matched
against the whole page, as ``soupsieve``'s ``select`` does, so ``div > p`` finds the record's
own ``p`` children); without a selector the field reads that element itself. Every field is
in every record, with its default when nothing was found.
"""

from __future__ import annotations

import copy
import math
import re
from array import array
from bisect import bisect_right
from typing import Any

from lxml import etree

from core.items.records import Records
from core.record_schema import FieldSpec, Query, RecordSchema, parse_schema
from core.selectors import MAX_STEPS, Matcher, SelectorBudgetExceeded
from crawler.extract.fetched import FetchedPage
from crawler.extract.links import link_url
from crawler.extract.registry import extracts

#: Records of one page.
MAX_RECORDS = 1000
#: Items of one list field, in one record.
MAX_LIST_ITEMS = 1000
#: Characters of one page's answer (values, and the names of the fields holding them): a bit
#: more than the largest page the crawler downloads (10 MiB), whose content it holds at most.
MAX_ANSWER_CHARS = 12_000_000
#: What the budget's steps stand for, measured (a step of the matcher takes about 100 ns): an
#: lxml XPath call however small its subtree (3 µs), an element or string it gives (its
#: XPath's own cost is :attr:`core.xpaths.XPathQuery.weight`, in quarter steps); the
#: characters of text one step stands for; what making any value costs (3 µs), and a URL more
#: (urljoin and its checks: 10 µs); an HTML fragment's copy, cleaning and serialisation per
#: element (700 ns) and a text's, in a subtree with a script (330 ns: libxml2 serialises the
#: others, 30 ns).
XPATH_CALL_STEPS = 30
XPATH_RESULT_STEPS = 4
CHARS_PER_STEP = 100
VALUE_STEPS = 30
URL_STEPS = 100
HTML_STEPS = 8
SCRIPTED_TEXT_STEPS = 4
#: Digits of a number: more are an identifier, not a quantity (and no float holds them).
MAX_DIGITS = 30

_HIDDEN = ("script", "style")
_TEXTS = etree.XPath("descendant-or-self::text()[not(parent::script or parent::style)]",
                     smart_strings=False)
#: Elements with an event handler (HTML's parser writes attribute names in lower case).
_HANDLERS = etree.XPath("descendant-or-self::*[@*[starts-with(name(), 'on')]]")
#: The first number: digits grouped by spaces or apostrophes in threes, or by . and , (a sign
#: only where no word runs into it). Each repeat starts with a separator: linear.
_NUMBER = re.compile(r"(?<![\d.,])(?:(?<!\w)([-\u2212]))?"
                     r"(\d+(?:[ \u00a0\u2009\u202f']\d{3}(?!\d)|[.,]\d+)*)")
_GROUPING = re.compile(r"[ \u00a0\u2009\u202f']")


class AnswerTooLarge(SelectorBudgetExceeded):
    """The records of a page would hold more than :data:`MAX_ANSWER_CHARS` characters."""


@extracts("schema")
def extract_schema(page: FetchedPage, *, schema: Any) -> Records:
    """The records of ``schema`` (a client's JSON schema, checked already) on ``page``: a
    collection's ``extract: "schema"``, ``scrapy crawl schema``."""
    return Records(records=extract_records(page, parse_schema(schema)))


def extract_records(page: FetchedPage, schema: RecordSchema, *, max_steps: int = MAX_STEPS
                    ) -> list[dict[str, Any]]:
    """The records ``schema`` reads from ``page``, in document order, at most
    :data:`MAX_RECORDS`; ``[]`` for an empty page. Raises
    :class:`~core.selectors.SelectorBudgetExceeded` when the page's budget (``max_steps``)
    runs out, :class:`AnswerTooLarge` (one of those) when the answer would."""
    root = page.root
    if root is None:
        return []
    return _Reader(root, page.base, max_steps).records(schema)


class _Reader:
    """One page's elements, indexed once: each one's document-order index, the index of its
    last descendant (its subtree is the range between), and the characters (text, tails,
    attributes) before it, for what reading a subtree costs."""

    def __init__(self, root: Any, base: str, max_steps: int) -> None:
        self.root, self.base = root, base
        self.matcher = matcher = Matcher(root, max_steps)
        elements, order = matcher.elements, matcher.order
        matcher.spend(2 * len(elements))
        self.ends = array("i", range(len(elements)))
        self.chars = array("q", [0])
        for el in elements:
            self.chars.append(self.chars[-1] + len(el.text or "") + len(el.tail or "")
                              + sum(len(k) + len(v) for k, v in el.items()))
        self.hidden = [index for index, el in enumerate(elements) if el.tag in _HIDDEN]
        for index in range(len(elements) - 1, 0, -1):
            parent = order[elements[index].getparent()]
            self.ends[parent] = max(self.ends[parent], self.ends[index])
        self.found: dict[str, array[int]] = {}  # CSS selector → indexes of its matches
        self.answer_left = MAX_ANSWER_CHARS

    def records(self, schema: RecordSchema) -> list[dict[str, Any]]:
        if schema.base_selector is None:
            tops = [self.root]
        elif schema.base_selector.kind == "css":
            tops = self.matcher.select(schema.base_selector.compiled)[:MAX_RECORDS]
        else:
            tops = [el for el in self._xpath(self.root, schema.base_selector)
                    if not isinstance(el, str)][:MAX_RECORDS]
        return [self._record(top, schema.fields) for top in tops]

    # --- budgets --------------------------------------------------------------------------

    def _cost(self, el: Any) -> int:
        """Steps reading the subtree of ``el`` takes: its elements and its characters."""
        start = self.matcher.order[el]
        end = self.ends[start]
        return end - start + 1 + (self.chars[end + 1] - self.chars[start]) // CHARS_PER_STEP

    def _keep(self, value: Any, name: str = "") -> Any:
        size = (len(value) if isinstance(value, str) else 8) + len(name) + 4
        self.answer_left -= size
        if self.answer_left < 0:
            raise AnswerTooLarge(f"The records of this page would hold more than "
                                 f"{MAX_ANSWER_CHARS:,} characters; select fewer or smaller "
                                 "records.")
        return value

    # --- finding --------------------------------------------------------------------------

    def _find(self, scope: Any, query: Query, most: int) -> list[Any]:
        """Up to ``most`` of the elements (or strings, from an XPath) ``query`` finds inside
        ``scope``, in document order."""
        if query.kind == "xpath":
            return self._xpath(scope, query, most)[:most]
        found = self.found.get(query.text)
        if found is None:
            order = self.matcher.order
            found = array("i", [order[el] for el in self.matcher.select(query.compiled)])
            self.found[query.text] = found
        start = self.matcher.order[scope]
        low = bisect_right(found, start)
        high = min(bisect_right(found, self.ends[start], low), low + most)
        self.matcher.spend(1 + high - low)
        elements = self.matcher.elements
        return [elements[index] for index in found[low:high]]

    def _xpath(self, scope: Any, query: Query, most: int = MAX_RECORDS) -> list[Any]:
        """What ``query`` gives from ``scope``: its elements in document order, then its
        strings (``@href``, ``text()``, values); only the first of each branch when ``most``
        is 1."""
        compiled = query.compiled
        start = self.matcher.order[scope]
        end = self.ends[start]
        steps = len(compiled.branches) * XPATH_CALL_STEPS + compiled.weight // 4
        if compiled.below:
            steps += (compiled.weight * (end - start + 1) // 4
                      + compiled.text_weight * (self.chars[end + 1] - self.chars[start])
                      // CHARS_PER_STEP)
        self.matcher.spend(steps)
        order = self.matcher.order
        elements: list[Any] = []
        strings: list[str] = []
        for branch in compiled.firsts if most == 1 and compiled.firsts else compiled.branches:
            try:
                result = branch(scope)
            except etree.XPathError:  # the checks leave none expected; a page is no reason
                continue
            for item in result if isinstance(result, list) else [result]:
                if isinstance(item, str):
                    strings.append(item)
                elif isinstance(item, bool):
                    strings.append("true" if item else "false")
                elif isinstance(item, float):
                    if math.isfinite(item):
                        strings.append(str(int(item)) if item.is_integer() else repr(item))
                elif item in order:  # elements, not comments
                    elements.append(item)
        self.matcher.spend(XPATH_RESULT_STEPS * (len(elements) + len(strings)))
        if len(compiled.branches) > 1:  # each in document order; together, once each
            elements = sorted(set(elements), key=order.__getitem__)
        return elements + strings

    # --- reading --------------------------------------------------------------------------

    def _record(self, scope: Any, fields: tuple[FieldSpec, ...]) -> dict[str, Any]:
        return {spec.name: self._keep(self._value(scope, spec), spec.name) for spec in fields}

    def _value(self, scope: Any, spec: FieldSpec) -> Any:
        self.matcher.spend(VALUE_STEPS + (URL_STEPS if spec.type == "url" else 0))
        most = MAX_LIST_ITEMS if spec.type == "list" else 1
        found = [scope] if spec.selector is None else self._find(scope, spec.selector, most)
        if spec.type == "list":
            if spec.fields:
                return [self._record(el, spec.fields) for el in found if not isinstance(el, str)]
            self.matcher.spend(VALUE_STEPS * len(found))
            return [self._keep(self._text(item)) for item in found]
        if not found:
            return spec.default
        value = self._scalar(found[0], spec)
        return spec.default if value is None or value == "" else value

    def _scalar(self, target: Any, spec: FieldSpec) -> Any:
        if isinstance(target, str):  # an XPath's attribute, text node or value
            if spec.type == "number":
                return first_number(target)
            return link_url(self.base, target) if spec.type == "url" else _collapse(target)
        if spec.type == "text":
            return self._text(target)
        if spec.type == "attribute":
            return target.get(spec.attribute)
        if spec.type == "html":
            return self._html(target)
        if spec.type == "number":
            text = target.get(spec.attribute) if spec.attribute else self._text(target)
            return first_number(text or "")
        if spec.type == "url":
            href = (target.get(spec.attribute) if spec.attribute
                    else target.get("href") or target.get("src"))
            return link_url(self.base, href)
        return self._record(target, spec.fields)  # nested

    def _text(self, target: Any) -> str | None:
        """The text of an element without its scripts and styles, whitespace collapsed; None
        when empty. Serialised by libxml2 (30 ns an element) unless the subtree holds a script
        or a style: their text is then left out by an XPath (330 ns an element)."""
        if isinstance(target, str):
            return _collapse(target) or None
        start = self.matcher.order[target]
        if target.tag in _HIDDEN:
            return None
        low = bisect_right(self.hidden, start)
        if low < len(self.hidden) and self.hidden[low] <= self.ends[start]:
            self.matcher.spend(SCRIPTED_TEXT_STEPS * self._cost(target))
            text = "".join(_TEXTS(target))
        else:
            self.matcher.spend(self._cost(target))
            text = etree.tostring(target, method="text", encoding="unicode", with_tail=False)
        return _collapse(text) or None

    def _html(self, target: Any) -> str | None:
        """The element's outer HTML without scripts, styles, comments and on* attributes."""
        if target.tag in _HIDDEN:
            return None
        self.matcher.spend(HTML_STEPS * self._cost(target))
        clean = copy.deepcopy(target)
        clean.tail = None
        etree.strip_elements(clean, *_HIDDEN, etree.Comment, etree.ProcessingInstruction,
                             with_tail=False)
        for el in _HANDLERS(clean):
            for name in [name for name in el.attrib if name.lower().startswith("on")]:
                del el.attrib[name]
        return etree.tostring(clean, method="html", encoding="unicode")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def first_number(text: str) -> int | float | None:
    """The first number in ``text``: ``"1,234.56"``, ``"1.234,56"`` and ``"1 234,56 €"`` are
    1234.56, ``"12 €"`` is 12. Where both . and , appear the last one is the decimal mark; one
    alone is a decimal mark unless exactly three digits follow it and the number does not start
    with 0 (``"1,234"`` and ``"1.234"`` are 1234, ``"0.125"`` and ``"12,50"`` decimals); one
    repeated groups the digits (``"1.234.567"``, Indian ``"1,23,45,678"``), unless the groups
    say otherwise (``"12.5.2024"`` reads 12.5). An int without a decimal part, else a float;
    None without a number, or with more than :data:`MAX_DIGITS` digits."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    sign, body = match.group(1), _GROUPING.sub("", match.group(2))
    marks = [char for char in body if char in ".,"]
    whole, fraction = body, ""
    if marks:
        last = marks[-1]
        groups = re.split(r"[.,]", body)
        if len(set(marks)) == 2 or (
                len(marks) == 1 and (len(groups[1]) != 3 or body.startswith("0"))):
            whole, _, fraction = body.rpartition(last)
        elif len(marks) > 1 and not _grouped(groups):
            whole, fraction = groups[0], groups[1]
        whole = re.sub(r"[.,]", "", whole)
    if len(whole) + len(fraction) > MAX_DIGITS:
        return None
    negative = sign in ("-", "\u2212")
    if fraction:
        value = float(f"{whole}.{fraction}")
        return -value if negative else value
    return -int(whole) if negative else int(whole)


def _grouped(groups: list[str]) -> bool:
    """Whether digit groups split at one repeated mark are thousands (1.234.567) or Indian
    lakhs (1,23,45,678)."""
    rest = groups[1:]
    return all(len(g) == 3 for g in rest) or (
        len(rest[-1]) == 3 and all(len(g) == 2 for g in rest[:-1]))

