"""Each page operation's extraction function, bound to its name in the table of operations
(:data:`core.operations.EXTRACTIONS`) where it is defined: ``@extracts("page")``.

The framework-free table names an extraction and its item; this binds the function that makes
that item from a :class:`~crawler.extract.fetched.FetchedPage`. Every module of
:mod:`crawler.extract` is imported before the first lookup, so a new extractor module needs no
list to be added to.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any, TypeVar

from core.operations import EXTRACTIONS

Extractor = TypeVar("Extractor", bound=Callable[..., Any])

_BOUND: dict[str, Callable[..., Any]] = {}


def extracts(name: str) -> Callable[[Extractor], Extractor]:
    """Bind the decorated function as the extraction called ``name`` (its page, and the
    operation's options as keyword arguments, in; the operation's item out)."""
    if name not in EXTRACTIONS:
        raise KeyError(f"{name!r} is no extraction of core.operations.OPERATIONS")

    def bind(function: Extractor) -> Extractor:
        if _BOUND.setdefault(name, function) is not function:
            raise ValueError(f"Two functions extract {name!r}: {_BOUND[name]} and {function}")
        return function

    return bind


@functools.cache
def _import_extractors() -> None:
    package = importlib.import_module("crawler.extract")
    for module in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)


def extractor(name: str) -> Callable[..., Any]:
    """The function bound to extraction ``name`` (KeyError when none is)."""
    _import_extractors()
    try:
        return _BOUND[name]
    except KeyError:
        raise KeyError(f"No function extracts {name!r}: decorate it with "
                       f"@extracts({name!r})") from None
