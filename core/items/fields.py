"""One way to declare a documented item field."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, field
from typing import Any


def described(description: str, *, default: Any = MISSING,
              factory: Callable[[], Any] | Any = MISSING) -> Any:
    """A dataclass field with its description, for readers and for the OpenAPI document.

    The description sits in the field's metadata where marshmallow-dataclass passes it on to
    the marshmallow field (``metadata={"description": …}``), and so to apispec.
    """
    return field(default=default, default_factory=factory,
                 metadata={"metadata": {"description": description}})
