"""Read schema.org data one way, whichever syntax carried it: JSON-LD, microdata or RDFa.

Microdata and RDFa items are first reshaped into JSON-LD-like dicts (``{"@type": …, "name": …}``
with nested dicts for nested items), so the product and offer readers are written once, against
JSON-LD, and every syntax gets the same tolerance (lists where one value is expected, ``@id``
references, numbers for strings, schema.org IRIs for names).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from crawler.extract.structured import clean, join

_LOCAL_NAME = re.compile(r"[^/#:]*$")
MAX_DEPTH = 40  # deeper JSON is not a product page's markup; it also bounds the recursion


def local_name(iri: str) -> str:
    """``"http://schema.org/InStock"``, ``"schema:InStock"`` → ``"InStock"``: the one way this
    package strips an IRI (or a prefixed name) to its local name."""
    match = _LOCAL_NAME.search(iri.strip())
    return match.group() if match else ""


def types(node: Mapping[str, Any]) -> frozenset[str]:
    """The node's types as lower-case local names: sites write ``"product"``,
    ``["Product", "Thing"]`` and ``"http://schema.org/Product"`` alike."""
    value = node.get("@type")
    values = value if isinstance(value, list) else [value]
    return frozenset(local_name(v).lower() for v in values if isinstance(v, str))


def number_text(value: int | float | Decimal) -> str | None:
    """A number as plain decimal text, without float noise or exponent (19.9 → "19.9",
    1e21 → "1000000000000000000000"); None for booleans, NaN and infinities."""
    if isinstance(value, bool):
        return None
    try:
        number = value if isinstance(value, Decimal) else Decimal(repr(value))
    except (InvalidOperation, ValueError):
        return None
    return format(number, "f") if number.is_finite() else None


def from_microdata(value: Any) -> Any:
    """extruct microdata (``{"type", "properties"}``, nested alike) → JSON-LD-shaped dicts."""
    if isinstance(value, list):
        return [from_microdata(item) for item in value]
    if isinstance(value, dict) and isinstance(value.get("properties"), dict):
        node = {key: from_microdata(item) for key, item in value["properties"].items()}
        if value.get("type"):
            node["@type"] = value["type"]
        return node
    return value


def from_rdfa(graph: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """extruct's expanded RDFa graph → nested JSON-LD-shaped dicts, unreferenced nodes first.

    pyRdfa writes every typed element as its own node and links them by (blank node) ``@id``;
    nesting them back gives a product its offers and brand as JSON-LD would. Predicates are
    reduced to their local names (``https://schema.org/price`` → ``price``).
    """
    by_id = {node["@id"]: node for node in graph if isinstance(node.get("@id"), str)}
    referenced = {ref for node in by_id.values() for ref in _references(node)} - {None}

    def convert(node: dict[str, Any], path: frozenset[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"@type": [t for t in node.get("@type", []) if isinstance(t, str)]}
        for key, values in node.items():
            if key.startswith("@") or not isinstance(values, list):
                continue
            converted = [value_of(value, path) for value in values if isinstance(value, dict)]
            out[local_name(key)] = converted[0] if len(converted) == 1 else converted
        return out

    def value_of(value: dict[str, Any], path: frozenset[str]) -> Any:
        if "@value" in value:
            return value["@value"]
        ref = value.get("@id")
        if ref in by_id and ref not in path:  # the path guard stops reference cycles
            return convert(by_id[ref], path | {ref})
        return ref

    ordered = sorted(by_id.values(), key=lambda node: node["@id"] in referenced)
    return [convert(node, frozenset([node["@id"]])) for node in ordered]


def _references(node: dict[str, Any]) -> Iterator[str | None]:
    """The ``@id`` of every other node this expanded node links to."""
    for values in node.values():
        for value in values if isinstance(values, list) else []:
            if isinstance(value, dict) and value.get("@id") != node["@id"]:
                yield value.get("@id")


def prop(node: Mapping[str, Any], key: str) -> Any:
    """The value of property ``key``; its case is ignored when the exact key is absent, since
    sites write ``pricecurrency``, ``productId`` or ``SKU`` for schema.org's names."""
    if key in node:
        return node[key]
    lowered = key.lower()
    return next((value for name, value in node.items() if name.lower() == lowered), None)


def id_index(items: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Every node that says more than its ``@id`` and ``@type``, by ``@id``, found at any
    depth; the first such node of an ``@id`` wins. The one ``@id`` index of the package."""
    index: dict[str, dict[str, Any]] = {}
    for node in walk(items):
        ref = node.get("@id")
        if isinstance(ref, str) and not is_reference(node):
            index.setdefault(ref, node)
    return index


def is_reference(node: Mapping[str, Any]) -> bool:
    """A bare reference: ``{"@id": …}``, perhaps with ``@type``, saying nothing else."""
    return isinstance(node.get("@id"), str) and not set(node) - {"@id", "@type"}


def resolve(node: dict[str, Any], by_id: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The node a bare reference names (Yoast and friends link ``@graph`` nodes so); any other
    node, and a reference to an unknown ``@id``, is itself."""
    return by_id.get(node["@id"], node) if is_reference(node) else node


def walk(value: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every dict in ``value``, parents before their children, in document order."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from walk(child, depth + 1)
    elif isinstance(value, list):
        for child in value:
            yield from walk(child, depth + 1)


@dataclass(frozen=True)
class Reader:
    """Reads property values of one page's nodes: resolves ``@id`` references to the node
    they name and URLs against the page's base URL. ``territories`` are the countries the page
    addresses (``currencies.page_territories``), for prices written with "$" or "kr"."""

    base: str
    by_id: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    territories: tuple[str, ...] = ()

    def nodes(self, value: Any) -> list[dict[str, Any]]:
        """The objects in a value that may be one object or a list; references resolved."""
        values = value if isinstance(value, list) else [value]
        return [self.resolve(v) for v in values if isinstance(v, dict)]

    def node(self, value: Any) -> dict[str, Any] | None:
        return next(iter(self.nodes(value)), None)

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """The node a bare ``{"@id": …}`` reference names (itself when unknown)."""
        return resolve(node, self.by_id)

    def text(self, value: Any) -> str | None:
        """First non-empty text: strings HTML-unescaped (``B&amp;S``) with whitespace collapsed,
        numbers written out (GTINs and SKUs are often JSON numbers), ``{"@value": …}`` unwrapped.
        """
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "@value" in item:
                item = item["@value"]
            if isinstance(item, str):
                text = clean(html.unescape(item))
            elif isinstance(item, int | float | Decimal):
                text = number_text(item)
            else:
                continue
            if text:
                return text
        return None

    def name(self, value: Any) -> str | None:
        """A brand, seller or category as text: a string, or the first object's ``name``."""
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                item = self.resolve(item)
                item = item.get("name") or item.get("@value")
            if text := self.text(item):
                return text
        return None

    def urls(self, value: Any) -> list[str]:
        """Absolute http(s) URLs from strings or ImageObject-like objects, duplicates dropped."""
        found: list[str] = []
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                item = self.resolve(item)
                item = item.get("url") or item.get("contentUrl") or item.get("@id")
            for text in item if isinstance(item, list) else [item]:
                url = join(self.base, self.text(text))
                if url and url.startswith(("http://", "https://")) and url not in found:
                    found.append(url)
        return found

    def url(self, value: Any) -> str | None:
        return next(iter(self.urls(value)), None)
