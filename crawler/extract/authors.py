"""A page's author: a person or a byline, never the publisher or an address.

What pages put in their author fields is often not one: ``<meta name="author"
content="Condé Nast">`` (the publisher), ``"Sky"`` (the site), ``"jane@paper.com"`` or
``"Jane Doe (jane@paper.com)"``, a profile URL (``article:author`` on Facebook-style pages),
a JSON-LD ``author`` that is an ``Organization``. Each source is tried in turn (meta
``author``, ``article:author``, JSON-LD ``author``) and the first that still names someone
after cleaning wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from crawler.extract.schema import resolve, types
from crawler.extract.structured import clean

_URL_LIKE = re.compile(r"(https?:)?//|www\.|mailto:|tel:", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
#: What is left of "Jane Doe (jane@x.com)" or "Jane Doe <jane@x.com>" once the address went.
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|<\s*>|\[\s*\]")
#: JSON-LD types of an author that is an organisation (the publisher, not a byline).
_ORGANISATIONS = frozenset({"organization", "newsmediaorganization", "corporation", "website",
                            "onlinebusiness", "localbusiness", "educationalorganization"})


def page_author(meta: Mapping[str, str], json_ld_author: Any,
                by_id: Mapping[str, dict[str, Any]], publishers: Iterable[str | None]
                ) -> str | None:
    """The first author source that names a person or byline: not an address, not a URL,
    not one of ``publishers`` (the site's and publisher's names)."""
    taken = {name.casefold() for name in publishers if name}
    article_author = meta.get("article:author")
    for candidate in (meta.get("author"), article_author, _people(json_ld_author, by_id)):
        name = _cleaned(candidate)
        if name and name.casefold() not in taken:
            return name
    return None


def _cleaned(value: str | None) -> str | None:
    if not value or _URL_LIKE.match(value):
        return None
    text = _EMPTY_BRACKETS.sub("", _EMAIL.sub("", value))
    text = clean(text.strip(" ,;:|/-\u2013\u2014"))
    return text if text and any(char.isalpha() for char in text) else None


def json_ld_names(value: Any, by_id: Mapping[str, dict[str, Any]], *,
                  tidy: Callable[[str], str | None] = clean,
                  leave_out: frozenset[str] = frozenset()) -> str | None:
    """The name(s) of a JSON-LD person/organisation value (a string, a node or a list of
    either), each through ``tidy``, nodes of a type in ``leave_out`` left out; bare
    ``{"@id": …}`` references are resolved (Yoast links its ``@graph`` so)."""
    names = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = resolve(item, by_id)
            if types(item) & leave_out:
                continue
            item = item.get("name")
        names.append(tidy(item) if isinstance(item, str) else None)
    return ", ".join(dict.fromkeys(filter(None, names))) or None


def _people(value: Any, by_id: Mapping[str, dict[str, Any]]) -> str | None:
    """The people of a JSON-LD ``author`` value: organisations left out, addresses dropped."""
    return json_ld_names(value, by_id, tidy=_cleaned, leave_out=_ORGANISATIONS)
