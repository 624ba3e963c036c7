"""A record schema: structured data read from a page by CSS or XPath selectors, without a model
(a collection's ``extract: "schema"``, the ``schema`` of ``/scrape``), in the shape of
Crawl4AI's ``JsonCssExtractionStrategy``::

    {"base_selector": "li.product",
     "fields": [{"name": "title", "selector": "h2"},
                {"name": "price", "selector": ".price", "type": "number"},
                {"name": "link", "selector": "a", "type": "url"},
                {"name": "tags", "selector": ".tag", "type": "list"},
                {"name": "seller", "selector": ".seller", "type": "nested",
                 "fields": [{"name": "name", "selector": "b"}]}]}

``base_selector`` finds the records (without it the whole page is one record); each field's
``selector`` finds elements inside its record (inside its nested element). ``selector_type``
(``"css"``, the default, or ``"xpath"``) applies to every selector of the schema. A field has
a ``name``, unique in its level; a ``type``: text (the default), attribute, html, number, url,
nested or list; an ``attribute`` to read (required by attribute fields; url fields read href,
then src; number fields may read one); a JSON scalar ``default`` for when nothing is found
(null unless given); and ``fields`` (required by nested, optional for list: without them a
list of texts). ``selector`` may be left out, except by a list: the field then reads the
element it is in (the href of a record that is itself a link, the text of a ``li`` record).
A list has no default: it is ``[]`` when nothing matched. A top-level ``name`` labels the
schema, as Crawl4AI's do. Any other key is refused, by name.

:func:`parse_schema` checks all of it when the request is validated and raises
:class:`SchemaInvalid` naming the bad spot (``schema.fields[2].selector``) and why, in words.
What a client controls is bounded: the schema's size as JSON, its depth, its fields; every CSS
selector goes through :mod:`core.selectors` (matched in linear time) and every XPath through
:mod:`core.xpaths` (a subset libxml2 runs in linear time).

Framework-free: the standard library, cssselect and lxml (to compile XPath).
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from core.selectors import SelectorInvalid, parse_selector
from core.xpaths import ELEMENTS, XPathInvalid, parse_xpath

#: Bytes of the schema as compact JSON: a page's worth of fields is a few kilobytes.
MAX_SCHEMA_BYTES = 64 * 1024
#: Levels of fields: the top level is 1, a nested or list field's fields the next.
MAX_DEPTH = 8
#: Fields in one level, and in the whole schema.
MAX_FIELDS_PER_LEVEL = 100
MAX_FIELDS = 500
#: Characters in a field's name, the schema's name and an attribute's name.
MAX_NAME_LENGTH = 100

FIELD_TYPES = ("text", "attribute", "html", "number", "url", "nested", "list")
SELECTOR_TYPES = ("css", "xpath")
#: JSON scalars: a field's default.
Scalar = str | int | float | bool | None

_SCHEMA_KEYS = ("name", "base_selector", "selector_type", "fields")
_FIELD_KEYS = ("name", "selector", "type", "attribute", "default", "fields")
#: Crawl4AI's spellings, answered with ours.
_SPELLINGS = {"baseSelector": "base_selector", "selectorType": "selector_type"}
_READ_ATTRIBUTES = ("attribute", "url", "number")
_ATTRIBUTE_NAME = re.compile(r"[^\s\"'>/=]+")


class SchemaInvalid(ValueError):
    """A schema that cannot be used: ``path`` names the bad spot (``schema.fields[0].type``),
    ``message`` says why, in words."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Query:
    """One selector: ``text`` as written, ``kind`` ``"css"`` or ``"xpath"``, ``gives`` what it
    finds (:data:`core.xpaths.ELEMENTS`, ``STRINGS`` or ``VALUE``; CSS finds elements), and
    ``compiled`` (a :data:`core.selectors.Selector` or a :class:`core.xpaths.XPathQuery`)."""

    text: str
    kind: str
    gives: str = ELEMENTS
    compiled: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a record (see the module's docstring); ``fields`` is empty for scalar types
    and for a list of texts."""

    name: str
    type: str = "text"
    selector: Query | None = None
    attribute: str | None = None
    default: Scalar = None
    fields: tuple[FieldSpec, ...] = ()


@dataclass(frozen=True)
class RecordSchema:
    """A parsed schema: what :func:`crawler.extract.records.extract_records` reads a page by."""

    fields: tuple[FieldSpec, ...]
    base_selector: Query | None = None
    selector_type: str = "css"
    name: str | None = None


def parse_schema(value: object) -> RecordSchema:
    """``value`` (a decoded JSON object) checked and compiled, or :class:`SchemaInvalid`.

    Once per process for each schema (its JSON text is the key): a collection's pages, each
    checking its options and reading its records, share theirs."""
    return _parsed(_json_text(value))


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> RecordSchema:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise SchemaInvalid("schema", "A schema must be a JSON object.")
    _check_keys(value, _SCHEMA_KEYS, "schema", "a schema")
    name = None if value.get("name") is None else _name(value["name"], "schema.name")
    selector_type = value.get("selector_type", "css")
    if selector_type not in SELECTOR_TYPES:
        raise SchemaInvalid("schema.selector_type",
                            'selector_type must be "css" or "xpath" (it applies to every '
                            "selector of the schema).")
    base = value.get("base_selector")
    base_query = None if base is None else _query(base, selector_type, "schema.base_selector")
    if base_query is not None and base_query.gives != ELEMENTS:
        raise SchemaInvalid("schema.base_selector", "A base_selector must select elements: "
                            "the records.")
    fields = _fields(value.get("fields"), "schema.fields", selector_type, 1, [0])
    return RecordSchema(fields, base_query, selector_type, name)


def _json_text(value: object) -> str:
    """``value`` as compact JSON, within :data:`MAX_SCHEMA_BYTES`."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        raise SchemaInvalid("schema", "A schema may not nest that deeply.") from None
    except (TypeError, ValueError):
        raise SchemaInvalid("schema", "A schema must be made of JSON values: objects, lists, "
                            "strings, finite numbers, true, false and null.") from None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise SchemaInvalid("schema", "A schema may not hold lone surrogates (\\ud800 to "
                            "\\udfff alone): they are no characters.") from None
    if size > MAX_SCHEMA_BYTES:
        raise SchemaInvalid("schema", f"A schema may have at most {MAX_SCHEMA_BYTES:,} bytes as "
                            f"JSON, this one has {size:,}.")
    return text


def _check_keys(value: dict[Any, Any], known: tuple[str, ...], path: str, what: str) -> None:
    for key in value:
        if key not in known:
            hint = f" (write {_SPELLINGS[key]})" if key in _SPELLINGS else ""
            raise SchemaInvalid(f"{path}.{key}", f"Unknown key {key}{hint}: {what} has "
                                f"{', '.join(known[:-1])} and {known[-1]}.")


def _name(value: object, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SchemaInvalid(path, "A name must be a non-empty string.")
    if len(value) > MAX_NAME_LENGTH:
        raise SchemaInvalid(path, f"A name may have at most {MAX_NAME_LENGTH} characters, this "
                            f"one has {len(value)}.")
    return value


def _query(text: object, selector_type: str, path: str, *, base: bool = True) -> Query:
    try:
        if selector_type == "css":
            return Query(text, "css", ELEMENTS, parse_selector(text))  # type: ignore[arg-type]
        compiled = parse_xpath(text, absolute=base)
    except (SelectorInvalid, XPathInvalid) as exc:
        raise SchemaInvalid(path, str(exc)) from None
    return Query(compiled.text, "xpath", compiled.kind, compiled)


def _fields(value: object, path: str, selector_type: str, depth: int, count: list[int]
            ) -> tuple[FieldSpec, ...]:
    if not isinstance(value, list) or not value:
        raise SchemaInvalid(path, "fields must be a non-empty list of fields.")
    if len(value) > MAX_FIELDS_PER_LEVEL:
        raise SchemaInvalid(path, f"A level may have at most {MAX_FIELDS_PER_LEVEL} fields, "
                            f"this one has {len(value)}.")
    specs: list[FieldSpec] = []
    for index, item in enumerate(value):
        here = f"{path}[{index}]"
        count[0] += 1
        if count[0] > MAX_FIELDS:
            raise SchemaInvalid(here, f"A schema may have at most {MAX_FIELDS} fields in all.")
        spec = _field(item, here, selector_type, depth, count)
        if any(other.name == spec.name for other in specs):
            raise SchemaInvalid(f"{here}.name", f"Another field of this level is named "
                                f"{spec.name!r}: names are the keys of the record.")
        specs.append(spec)
    return tuple(specs)


def _field(value: object, path: str, selector_type: str, depth: int, count: list[int]
           ) -> FieldSpec:
    if not isinstance(value, dict):
        raise SchemaInvalid(path, "A field must be a JSON object.")
    _check_keys(value, _FIELD_KEYS, path, "a field")
    if "name" not in value:
        raise SchemaInvalid(f"{path}.name", "A field needs a name: its key in the record.")
    name = _name(value["name"], f"{path}.name")
    kind = value.get("type", "text")
    if kind not in FIELD_TYPES:
        shown = repr(kind) if isinstance(kind, str) else "that"
        raise SchemaInvalid(f"{path}.type", f"Unknown type {shown[:120]}: a field's type is one "
                            f"of {', '.join(FIELD_TYPES)}.")
    selector = None
    if value.get("selector") is not None:
        selector = _query(value["selector"], selector_type, f"{path}.selector", base=False)
        _check_gives(selector, kind, "fields" in value, "attribute" in value, f"{path}.selector")
    elif kind == "list":
        raise SchemaInvalid(f"{path}.selector", "A list field needs a selector: the elements "
                            "it lists.")
    return FieldSpec(name, kind, selector, _attribute(value, kind, path),
                     _default(value, kind, path), _subfields(value, kind, path, selector_type,
                                                             depth, count))


def _check_gives(query: Query, kind: str, has_fields: bool, has_attribute: bool, path: str
                 ) -> None:
    """An XPath that gives strings (``@href``, ``text()``, ``string(…)``) has no element for an
    html, attribute, nested field or a list of objects."""
    if query.gives == ELEMENTS:
        return
    if kind in ("html", "attribute", "nested") or (kind == "list" and has_fields):
        raise SchemaInvalid(path, f"This XPath gives strings, not elements: a {kind} field "
                            f"{'of fields ' if kind == 'list' else ''}reads elements (a text, "
                            "number or url field takes strings).")
    if has_attribute:
        raise SchemaInvalid(path, "This XPath gives strings, not elements: there is no "
                            "attribute to read (leave attribute out, or select elements).")


def _attribute(value: dict[str, Any], kind: str, path: str) -> str | None:
    if "attribute" not in value or value["attribute"] is None:
        if kind == "attribute":
            raise SchemaInvalid(f"{path}.attribute", "An attribute field needs the name of the "
                                "attribute to read.")
        return None
    if kind not in _READ_ATTRIBUTES:
        raise SchemaInvalid(f"{path}.attribute", "Only attribute, url and number fields read "
                            f"an attribute; a {kind} field reads the element.")
    attribute = value["attribute"]
    if not isinstance(attribute, str) or not _ATTRIBUTE_NAME.fullmatch(attribute):
        raise SchemaInvalid(f"{path}.attribute", "Not an attribute name (href, data-price).")
    if len(attribute) > MAX_NAME_LENGTH:
        raise SchemaInvalid(f"{path}.attribute", f"An attribute name may have at most "
                            f"{MAX_NAME_LENGTH} characters, this one has {len(attribute)}.")
    return attribute.lower()  # HTML's are case-insensitive; lxml keeps them lower-case


def _default(value: dict[str, Any], kind: str, path: str) -> Scalar:
    if "default" not in value:
        return None
    default = value["default"]
    if kind == "list":
        raise SchemaInvalid(f"{path}.default", "A list field has no default: it is [] when "
                            "nothing matches.")
    if not (default is None or isinstance(default, str | bool | int)
            or (isinstance(default, float) and math.isfinite(default))):
        raise SchemaInvalid(f"{path}.default", "A default must be a string, a number, true, "
                            "false or null.")
    return default  # type: ignore[no-any-return]


def _subfields(value: dict[str, Any], kind: str, path: str, selector_type: str, depth: int,
               count: list[int]) -> tuple[FieldSpec, ...]:
    if value.get("fields") is None:
        if kind == "nested":
            raise SchemaInvalid(f"{path}.fields", "A nested field needs fields: those of the "
                                "object it makes.")
        return ()
    if kind not in ("nested", "list"):
        raise SchemaInvalid(f"{path}.fields", f"Only nested and list fields have fields; a "
                            f"{kind} field gives one value.")
    if depth >= MAX_DEPTH:
        raise SchemaInvalid(f"{path}.fields", f"Fields may nest at most {MAX_DEPTH} levels "
                            f"deep; these would be level {depth + 1}.")
    return _fields(value["fields"], f"{path}.fields", selector_type, depth + 1, count)
