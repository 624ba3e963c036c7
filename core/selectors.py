"""Users' CSS selectors (``include_selectors``, ``exclude_selectors``, a schema's fields):
parsed once, matched in time linear in the page.

lxml runs a selector as the XPath ``cssselect`` translates it to, and some translations are
quadratic in a page's siblings: ``li:nth-child(2n)`` counts every earlier sibling of every
``li`` (13 s for one list of 50,000 items), ``li ~ li`` walks every later one. Inside one C
call, on the worker's reactor thread, that is every job of the worker frozen. So selectors are
parsed by ``cssselect`` and matched here, one pass over the page's elements per part of a
selector (the combinators by a flag carried down or along, the ``:nth-*`` pseudo-classes from
positions counted once), and each page has a budget of :data:`MAX_STEPS` element visits for
all of its selectors: past it, :class:`SelectorBudgetExceeded` (a clean failure of that page,
never a frozen worker). What cannot be matched in linear time is refused when the request is
validated (``:has()``, ``:contains()``), with the reason.

Framework-free: the matcher needs only what every lxml element has (``tag``, ``get``,
``getparent``, iteration over children).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cssselect import parser as css
from cssselect.parser import SelectorError, parse_series

from core.inputs import checked_text, errors_by_index

#: Selectors in each of ``include_selectors`` and ``exclude_selectors``.
MAX_SELECTORS = 20
#: Characters in one selector.
MAX_SELECTOR_LENGTH = 500
#: Element visits all the selectors of one page may take: about a second of matching; a
#: selector of ten parts on a page of 100,000 elements takes a million.
MAX_STEPS = 20_000_000

Element = Any
#: A parsed selector group (``a, b``), ready to match.
Selector = tuple[Any, ...]

_STRUCTURAL = {"first-child", "last-child", "only-child", "first-of-type", "last-of-type",
               "only-of-type", "empty", "root"}
_NTH = {"nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type"}
_OPERATORS = {"exists", "=", "~=", "|=", "^=", "$=", "*=", "!="}
_COMBINATORS = {" ", ">", "+", "~"}


class SelectorInvalid(ValueError):
    """A selector that cannot be used; the message says why, in words."""


class SelectorBudgetExceeded(RuntimeError):
    """The page's selectors needed more than :data:`MAX_STEPS` element visits."""


def parse_selector(text: object) -> Selector:
    """``text`` parsed, or :class:`SelectorInvalid` saying why (syntax, length, or a feature
    that cannot be matched in linear time). Once per process for each selector: a
    collection's pages, each checking its options and matching them, share theirs."""
    return _parsed(checked_text(text, "a selector", MAX_SELECTOR_LENGTH, SelectorInvalid))


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> Selector:
    try:
        group = css.parse(text)
    except SelectorError as exc:
        raise SelectorInvalid(f"Not a valid CSS selector: {exc}.") from None
    for selector in group:
        if selector.pseudo_element is not None:
            raise SelectorInvalid(f"Pseudo-elements (::{selector.pseudo_element}) select no "
                                  "element.")
        _check(selector.parsed_tree)
    return tuple(selector.parsed_tree for selector in group)


def selector_errors(selectors: Sequence[object]) -> dict[int, str]:
    """Index → message for each selector that cannot be used; ``{}`` when all can."""
    return errors_by_index(selectors, parse_selector, SelectorInvalid)


def _check(node: Any) -> None:
    """Refuse what :class:`Matcher` does not match, naming it."""
    kind = type(node).__name__
    if isinstance(node, css.Element):
        return
    if isinstance(node, css.CombinedSelector):
        _check(node.selector)
        _check(node.subselector)
        return
    if isinstance(node, css.Pseudo) and node.ident.lower() not in _STRUCTURAL:
        raise SelectorInvalid(f"Unsupported pseudo-class :{node.ident} (supported: "
                              f"{', '.join(sorted(_STRUCTURAL | _NTH))}, :not, :is, :where).")
    if isinstance(node, css.Function):
        if node.name.lower() not in _NTH:
            raise SelectorInvalid(f"Unsupported pseudo-class :{node.name}() (supported: "
                                  f"{', '.join(sorted(_NTH))}, :not, :is, :where).")
        try:
            parse_series(node.arguments)
        except ValueError:
            raise SelectorInvalid(f"Not a valid :{node.name}() argument.") from None
    if isinstance(node, css.Attrib) and node.operator not in _OPERATORS:
        raise SelectorInvalid(f"Unsupported attribute operator {node.operator}.")
    if isinstance(node, css.Relation):
        raise SelectorInvalid(":has() is not supported: it cannot be matched in linear time.")
    if isinstance(node, css.Negation):
        _check(node.subselector)
    if isinstance(node, css.Matching | css.SpecificityAdjustment):
        for inner in node.selector_list:
            _check(inner)
    if kind not in ("Hash", "Class", "Attrib", "Pseudo", "Function", "Negation", "Matching",
                    "SpecificityAdjustment"):
        raise SelectorInvalid(f"Unsupported selector part ({kind}).")
    _check(node.selector)


class Matcher:
    """The elements of one page, with what the selectors ask of their places, counted once;
    :meth:`select` gives the elements a selector matches, in document order."""

    def __init__(self, root: Element, max_steps: int = MAX_STEPS) -> None:
        self.root = root
        self.elements: list[Element] = [el for el in root.iter() if isinstance(el.tag, str)]
        self.order = {el: i for i, el in enumerate(self.elements)}
        self.steps_left = max_steps
        self._places: dict[Element, tuple[int, int, int, int]] | None = None

    def select(self, selector: Selector) -> list[Element]:
        """Every element ``selector`` matches, in document order."""
        matched: set[Element] = set()
        for tree in selector:
            matched |= self._match(tree)
        return sorted(matched, key=self.order.__getitem__)

    def select_outermost(self, selectors: Iterable[Selector]) -> list[Element]:
        """The elements any of ``selectors`` matches, in document order, without those inside
        another matched one (its content is already there)."""
        matched: set[Element] = set()
        for selector in selectors:
            for tree in selector:
                matched |= self._match(tree)
        inside = self._below(matched)
        return [el for el in self.elements if el in matched and el not in inside]

    # --- one pass per part ---------------------------------------------------------------

    def spend(self, steps: int) -> None:
        """Count ``steps`` element visits (or work that takes as long) against the page's
        budget: past it, :class:`SelectorBudgetExceeded`. Matching spends its own; a record
        schema (:mod:`crawler.extract.records`) spends what it reads besides."""
        self.steps_left -= steps
        if self.steps_left < 0:
            raise SelectorBudgetExceeded(
                f"The selectors would take more than {MAX_STEPS:,} element visits on this "
                "page; use fewer or simpler selectors.")

    def _filter(self, candidates: set[Element], keep: Callable[[Element], bool]
                ) -> set[Element]:
        self.spend(len(candidates))
        return {el for el in candidates if keep(el)}

    def _match(self, node: Any) -> set[Element]:
        if isinstance(node, css.Element):
            self.spend(len(self.elements))
            if node.element in (None, "*"):
                return set(self.elements)
            tag = node.element.lower()
            return {el for el in self.elements if el.tag == tag}
        if isinstance(node, css.CombinedSelector):
            return self._combined(self._match(node.selector), node.combinator,
                                  self._match(node.subselector))
        base = self._match(node.selector)
        if isinstance(node, css.Hash):
            return self._filter(base, lambda el: el.get("id") == node.id)
        if isinstance(node, css.Class):
            return self._filter(base, lambda el: node.class_name in (el.get("class") or "")
                                .split())
        if isinstance(node, css.Attrib):
            return self._filter(base, _attribute_test(node))
        if isinstance(node, css.Pseudo):
            return self._filter(base, self._structural(node.ident.lower()))
        if isinstance(node, css.Function):
            return self._filter(base, self._nth(node.name.lower(), *parse_series(node.arguments)))
        if isinstance(node, css.Negation):
            return base - self._match(node.subselector)
        # :is() and :where()
        either: set[Element] = set()
        for inner in node.selector_list:
            either |= self._match(inner)
        return base & either

    def _combined(self, left: set[Element], combinator: str, right: set[Element]
                  ) -> set[Element]:
        self.spend(len(self.elements))
        if combinator == ">":
            return {el for el in right if el.getparent() in left}
        if combinator == "+":
            return {el for el in right if _previous(el) in left}
        if combinator == "~":
            after: set[Element] = set()
            for parent in {el.getparent() for el in right}:
                seen = False
                for child in _children(parent):
                    if seen and child in right:
                        after.add(child)
                    seen = seen or child in left
            return after
        return right & self._below(left)

    def _below(self, tops: set[Element]) -> set[Element]:
        """Every element with an ancestor in ``tops``: a flag carried down in document
        order."""
        below: set[Element] = set()
        for el in self.elements:
            parent = el.getparent()
            if parent is not None and (parent in tops or parent in below):
                below.add(el)
        return below

    # --- places among siblings -------------------------------------------------------------

    @property
    def places(self) -> dict[Element, tuple[int, int, int, int]]:
        """Each element's (position, of how many siblings, position among its type, of how
        many of its type), positions from 1."""
        if self._places is None:
            self.spend(len(self.elements))
            places: dict[Element, tuple[int, int, int, int]] = {self.root: (1, 1, 1, 1)}
            for parent in self.elements:
                children = _children(parent)
                by_type: dict[str, int] = {}
                for child in children:
                    by_type[child.tag] = by_type.get(child.tag, 0) + 1
                seen: dict[str, int] = {}
                for position, child in enumerate(children, 1):
                    seen[child.tag] = seen.get(child.tag, 0) + 1
                    places[child] = (position, len(children), seen[child.tag],
                                     by_type[child.tag])
            self._places = places
        return self._places

    def _structural(self, ident: str) -> Callable[[Element], bool]:
        places = self.places
        tests: dict[str, Callable[[Element], bool]] = {
            "first-child": lambda el: places[el][0] == 1,
            "last-child": lambda el: places[el][0] == places[el][1],
            "only-child": lambda el: places[el][1] == 1,
            "first-of-type": lambda el: places[el][2] == 1,
            "last-of-type": lambda el: places[el][2] == places[el][3],
            "only-of-type": lambda el: places[el][3] == 1,
            "empty": lambda el: not len(el) and not (el.text or ""),
            "root": lambda el: el is self.root,
        }
        return tests[ident]

    def _nth(self, name: str, a: int, b: int) -> Callable[[Element], bool]:
        places = self.places
        of_type, last = "of-type" in name, "last" in name

        def index(el: Element) -> int:
            position, count, type_position, type_count = places[el]
            if of_type:
                position, count = type_position, type_count
            return count - position + 1 if last else position

        return lambda el: _in_series(index(el), a, b)


def _in_series(index: int, a: int, b: int) -> bool:
    """Whether ``index`` is ``a*n + b`` for some n ≥ 0."""
    if a == 0:
        return index == b
    n, rest = divmod(index - b, a)
    return rest == 0 and n >= 0


def _children(parent: Element) -> list[Element]:
    return [child for child in parent if isinstance(child.tag, str)]


def _previous(el: Element) -> Element | None:
    sibling = el.getprevious()
    while sibling is not None and not isinstance(sibling.tag, str):
        sibling = sibling.getprevious()
    return sibling


def _attribute_test(node: Any) -> Callable[[Element], bool]:
    name, operator = node.attrib.lower(), node.operator
    wanted = node.value.value if node.value is not None else ""
    tests: dict[str, Callable[[str], bool]] = {
        "exists": lambda value: True,
        "=": lambda value: value == wanted,
        "!=": lambda value: value != wanted,
        "~=": lambda value: wanted in value.split(),
        "|=": lambda value: value == wanted or value.startswith(wanted + "-"),
        "^=": lambda value: bool(wanted) and value.startswith(wanted),
        "$=": lambda value: bool(wanted) and value.endswith(wanted),
        "*=": lambda value: bool(wanted) and wanted in value,
    }
    test = tests[operator]

    def keep(el: Element) -> bool:
        value = el.get(name)
        if value is None:
            return operator == "!="
        return test(value)

    return keep
