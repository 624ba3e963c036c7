"""Record schemas (core.record_schema): what a client sends is parsed into frozen specs, or
refused with the path of the bad spot and the reason in words; sizes, depth and field counts
are bounded."""

from __future__ import annotations

import json
import re

import pytest

from core.record_schema import (
    MAX_DEPTH,
    MAX_FIELDS,
    MAX_FIELDS_PER_LEVEL,
    MAX_SCHEMA_BYTES,
    FieldSpec,
    RecordSchema,
    SchemaInvalid,
    parse_schema,
)

PRODUCTS = {
    "name": "Products",
    "base_selector": "li.product",
    "fields": [
        {"name": "title", "selector": "h2"},
        {"name": "price", "selector": ".price", "type": "number", "default": 0},
        {"name": "link", "selector": "a", "type": "url"},
        {"name": "id", "type": "attribute", "attribute": "Data-ID"},
        {"name": "tags", "selector": ".tag", "type": "list"},
        {"name": "seller", "selector": ".seller", "type": "nested",
         "fields": [{"name": "name", "selector": "b"}, {"name": "page", "type": "url"}]},
        {"name": "reviews", "selector": ".review", "type": "list",
         "fields": [{"name": "stars", "attribute": "data-stars", "type": "number"}]},
    ],
}


def test_a_schema_is_parsed_into_frozen_specs():
    schema = parse_schema(PRODUCTS)
    assert schema.name == "Products" and schema.selector_type == "css"
    assert schema.base_selector is not None and schema.base_selector.text == "li.product"
    title, price, link, id_, tags, seller, reviews = schema.fields
    assert title == FieldSpec("title", "text", title.selector)
    assert (price.type, price.default) == ("number", 0)
    assert (link.type, link.attribute) == ("url", None)  # href, then src
    assert (id_.selector, id_.attribute) == (None, "data-id")  # the record's own, lower-cased
    assert (tags.type, tags.fields) == ("list", ())  # a list of texts
    assert [f.name for f in seller.fields] == ["name", "page"]
    assert reviews.fields[0].attribute == "data-stars"
    # equal for equal input (the compiled selectors aside), hashable, immutable
    assert parse_schema(PRODUCTS) == schema and hash(parse_schema(PRODUCTS)) == hash(schema)
    with pytest.raises(AttributeError):
        schema.fields = ()  # type: ignore[misc]


def test_the_smallest_schema_reads_the_whole_page_as_one_record():
    schema = parse_schema({"fields": [{"name": "title", "selector": "title"}]})
    assert schema == RecordSchema(fields=schema.fields)
    assert schema.base_selector is None and schema.fields[0].type == "text"


def test_an_xpath_schema():
    schema = parse_schema({
        "selector_type": "xpath", "base_selector": "//div[@class='product']",
        "fields": [{"name": "title", "selector": ".//h2"},
                   {"name": "link", "selector": ".//a/@href", "type": "url"},
                   {"name": "price", "selector": "string(.//span[@class='price']/text())",
                    "type": "number"},
                   {"name": "cells", "selector": "./td | ./th", "type": "list"}]})
    assert schema.selector_type == "xpath"
    assert [f.selector.gives for f in schema.fields] == ["elements", "strings", "value",
                                                         "elements"]


def _field(**overrides):
    return {"fields": [{"name": "f", "selector": "p", **overrides}]}


def _nested(depth: int) -> dict:
    """A schema whose fields nest ``depth`` levels deep."""
    field: dict = {"name": "leaf", "selector": "p"}
    for _ in range(depth - 1):
        field = {"name": "n", "selector": "div", "type": "nested", "fields": [field]}
    return {"fields": [field]}


@pytest.mark.parametrize(("schema", "path", "message"), [
    ([], "schema", "A schema must be a JSON object."),
    ({"fields": [{"name": "f", "default": float("nan")}]}, "schema",
     "A schema must be made of JSON values"),
    ({"fields": [{"name": {1, 2}}]}, "schema", "A schema must be made of JSON values"),
    ({"fields": [{"name": "\ud800"}]}, "schema", "may not hold lone surrogates"),
    ({"baseSelector": "li", "fields": []}, "schema.baseSelector",
     "Unknown key baseSelector (write base_selector): a schema has name, base_selector, "
     "selector_type and fields."),
    ({"name": "", "fields": [{"name": "f"}]}, "schema.name", "A name must be a non-empty string."),
    ({"selector_type": "jquery", "fields": [{"name": "f"}]}, "schema.selector_type",
     'selector_type must be "css" or "xpath"'),
    ({"base_selector": "li[", "fields": [{"name": "f"}]}, "schema.base_selector",
     "Not a valid CSS selector"),
    ({"base_selector": "a:hover", "fields": [{"name": "f"}]}, "schema.base_selector",
     "Unsupported pseudo-class :hover"),
    ({"selector_type": "xpath", "base_selector": "//a/@href", "fields": [{"name": "f"}]},
     "schema.base_selector", "A base_selector must select elements"),
    ({"selector_type": "xpath", "base_selector": "//li[following-sibling::li]",
      "fields": [{"name": "f"}]}, "schema.base_selector",
     "may not use the following-sibling axis"),
    ({"selector_type": "xpath", "base_selector": "//*//*//*//*", "fields": [{"name": "f"}]},
     "schema.base_selector", "may descend (// or a descendant axis) once"),
    ({}, "schema.fields", "fields must be a non-empty list of fields."),
    ({"fields": []}, "schema.fields", "fields must be a non-empty list of fields."),
    ({"fields": {"name": "f"}}, "schema.fields", "fields must be a non-empty list of fields."),
    ({"fields": [{"name": f"f{i}"} for i in range(MAX_FIELDS_PER_LEVEL + 1)]}, "schema.fields",
     f"A level may have at most {MAX_FIELDS_PER_LEVEL} fields, this one has 101."),
    ({"fields": ["title"]}, "schema.fields[0]", "A field must be a JSON object."),
    ({"fields": [{"name": "a"}, {"name": "b", "colour": "red"}]}, "schema.fields[1].colour",
     "Unknown key colour: a field has name, selector, type, attribute, default and fields."),
    ({"fields": [{"selector": "p"}]}, "schema.fields[0].name", "A field needs a name"),
    ({"fields": [{"name": "  "}]}, "schema.fields[0].name", "A name must be a non-empty string."),
    ({"fields": [{"name": 3}]}, "schema.fields[0].name", "A name must be a non-empty string."),
    ({"fields": [{"name": "x" * 101}]}, "schema.fields[0].name",
     "A name may have at most 100 characters, this one has 101."),
    ({"fields": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}, "schema.fields[2].name",
     "Another field of this level is named 'a'"),
    (_field(type="date"), "schema.fields[0].type", "Unknown type 'date': a field's type is one "
     "of text, attribute, html, number, url, nested, list."),
    (_field(type=["text"]), "schema.fields[0].type", "Unknown type that"),
    (_field(selector="div[", type="text"), "schema.fields[0].selector",
     "Not a valid CSS selector"),
    (_field(selector="div:has(p)"), "schema.fields[0].selector", ":has() is not supported"),
    (_field(selector=12), "schema.fields[0].selector", "A selector must be a string."),
    ({"fields": [{"name": "f", "type": "list"}]}, "schema.fields[0].selector",
     "A list field needs a selector: the elements it lists."),
    (_field(type="attribute"), "schema.fields[0].attribute",
     "An attribute field needs the name of the attribute to read."),
    (_field(type="text", attribute="href"), "schema.fields[0].attribute",
     "Only attribute, url and number fields read an attribute; a text field reads the element."),
    (_field(type="attribute", attribute="a b"), "schema.fields[0].attribute",
     "Not an attribute name"),
    (_field(type="attribute", attribute="a" * 101), "schema.fields[0].attribute",
     "An attribute name may have at most 100 characters"),
    (_field(default=[1]), "schema.fields[0].default",
     "A default must be a string, a number, true, false or null."),
    (_field(default={"a": 1}), "schema.fields[0].default", "A default must be a string"),
    (_field(type="list", default="none"), "schema.fields[0].default",
     "A list field has no default: it is [] when nothing matches."),
    (_field(type="nested"), "schema.fields[0].fields",
     "A nested field needs fields: those of the object it makes."),
    (_field(type="url", fields=[{"name": "g"}]), "schema.fields[0].fields",
     "Only nested and list fields have fields; a url field gives one value."),
    (_field(type="nested", fields=[]), "schema.fields[0].fields",
     "fields must be a non-empty list of fields."),
    (_field(type="list", fields=[{"name": "g"}, {"name": "h", "type": "nested"}]),
     "schema.fields[0].fields[1].fields", "A nested field needs fields"),
    (_field(type="nested", fields=[{"name": "g", "fields": [{"name": "h"}]}]),
     "schema.fields[0].fields[0].fields", "Only nested and list fields have fields"),
    (_nested(MAX_DEPTH + 1), "schema" + ".fields[0]" * MAX_DEPTH + ".fields",
     f"Fields may nest at most {MAX_DEPTH} levels deep; these would be level 9."),
    ({"fields": [{"name": f"n{i}", "selector": "div", "type": "nested",
                  "fields": [{"name": f"f{j}"} for j in range(100)]} for i in range(5)]},
     "schema.fields[4].fields[95]", f"A schema may have at most {MAX_FIELDS} fields in all."),
])
def test_refusals_name_the_bad_spot_and_say_why(schema, path, message):
    with pytest.raises(SchemaInvalid) as refused:
        parse_schema(schema)
    assert refused.value.path == path
    assert message in refused.value.message
    assert str(refused.value) == f"{path}: {refused.value.message}"


def _xpath_field(selector: str, **overrides) -> dict:
    return {"selector_type": "xpath", "fields": [{"name": "f", "selector": selector,
                                                  **overrides}]}


@pytest.mark.parametrize(("schema", "message"), [
    (_xpath_field("//h2"), "A field's XPath starts at its record: write .//h2"),
    (_xpath_field("following-sibling::td"), "may not use the following-sibling axis"),
    (_xpath_field(".//div//h2"), "may descend (// or a descendant axis) once"),
    (_xpath_field(".//*//*//*//*"), "may descend (// or a descendant axis) once"),
    (_xpath_field(".//td[. = 'Price']"), "The operands of = may not be elements"),
    (_xpath_field(".//a/@href", type="html"),
     "This XPath gives strings, not elements: a html field reads elements"),
    (_xpath_field("@href", type="attribute", attribute="href"),
     "This XPath gives strings, not elements: a attribute field reads elements"),
    (_xpath_field("text()", type="list", fields=[{"name": "g"}]),
     "This XPath gives strings, not elements: a list field of fields reads elements"),
    (_xpath_field(".//a/@href", type="url", attribute="src"),
     "This XPath gives strings, not elements: there is no attribute to read"),
])
def test_xpath_fields_are_checked_where_they_stand(schema, message):
    with pytest.raises(SchemaInvalid, match=re.escape(message)) as refused:
        parse_schema(schema)
    assert refused.value.path == "schema.fields[0].selector"


def test_a_schema_of_64_kib_is_accepted_one_byte_more_is_not():
    def padded(size: int) -> dict:
        schema = {"fields": [{"name": "f", "default": ""}]}
        schema["fields"][0]["default"] = "é" * ((size - len(_compact(schema))) // 2)
        if len(_compact(schema)) < size:
            schema["fields"][0]["default"] += "x"
        return schema

    assert len(_compact(padded(MAX_SCHEMA_BYTES))) == MAX_SCHEMA_BYTES
    parse_schema(padded(MAX_SCHEMA_BYTES))
    too_big = padded(MAX_SCHEMA_BYTES + 1)
    assert len(_compact(too_big)) == MAX_SCHEMA_BYTES + 1
    with pytest.raises(SchemaInvalid, match="at most 65,536 bytes as JSON, this one has "
                                            "65,537") as refused:
        parse_schema(too_big)
    assert refused.value.path == "schema"


def _compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_huge_schema_is_refused_by_its_size_before_anything_is_compiled():
    fields = [{"name": f"f{i}", "selector": "div " * 100} for i in range(10_000)]
    with pytest.raises(SchemaInvalid, match="bytes as JSON"):
        parse_schema({"fields": fields})


def test_fields_nest_eight_levels_deep_not_nine():
    schema = parse_schema(_nested(MAX_DEPTH))
    depth, fields = 0, schema.fields
    while fields:
        depth, fields = depth + 1, fields[0].fields
    assert depth == MAX_DEPTH
    with pytest.raises(SchemaInvalid, match="these would be level 9"):
        parse_schema(_nested(MAX_DEPTH + 1))


def test_a_schema_nested_beyond_what_json_can_write_is_refused():
    value: list = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(SchemaInvalid, match="may not nest that deeply"):
        parse_schema({"fields": value})


def test_a_schema_of_500_fields_is_accepted():
    schema = parse_schema({"fields": [
        {"name": f"n{i}", "selector": "div", "type": "nested",
         "fields": [{"name": f"f{j}"} for j in range(99)]} for i in range(5)]})
    assert sum(1 + len(f.fields) for f in schema.fields) == MAX_FIELDS


@pytest.mark.parametrize("default", [None, "n/a", 0, -1.5, True, False])
def test_defaults_are_json_scalars(default):
    assert parse_schema(_field(default=default)).fields[0].default == default


def test_each_selector_is_optional_but_a_lists():
    schema = parse_schema({"fields": [{"name": t, "type": t, "selector": None,
                                       **({"attribute": "id"} if t == "attribute" else {}),
                                       **({"fields": [{"name": "x"}]} if t == "nested" else {})}
                                      for t in ("text", "attribute", "html", "number", "url",
                                                "nested")]})
    assert all(f.selector is None for f in schema.fields)
