"""What every section of the configuration shares: the field of one variable (:func:`var`),
the one function that reads a section's variables from the environment (:func:`parse`), and
the one error (:class:`ConfigError`).

A section is a frozen dataclass deriving from :class:`Section`; each of its fields declared
with :func:`var` is one environment variable (a field without it, such as
``StorageConfig.redis_url_origin``, is derived, never read). Nothing here knows any section:
the rules are the same for all of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, field, fields
from typing import Any, ClassVar, Self

from core.config.kinds import Kind


class ConfigError(ValueError):
    """A variable has a value it cannot have; the message is one line naming it."""


def var(name: str, kind: Kind, default: Any) -> Any:
    """A field read from the environment variable ``name``."""
    return field(default=default, metadata={"env": name, "kind": kind})


def variable_fields(section: type) -> Iterator[Field[Any]]:
    """The fields of ``section`` (a dataclass) that are environment variables, in order."""
    return (spec for spec in fields(section) if "env" in spec.metadata)


def parse(section: type, environ: Mapping[str, str]) -> dict[str, Any]:
    """The values of those of ``section``'s variables that ``environ`` sets, by field name,
    parsed and validated (an empty text is unset: not in the answer). Raises
    :class:`ConfigError` for the first bad value, in field order."""
    values: dict[str, Any] = {}
    for spec in variable_fields(section):
        name, kind = spec.metadata["env"], spec.metadata["kind"]
        if name not in environ:
            continue
        raw = environ[name]
        if not raw.strip():
            if kind.empty_is_unset:
                continue
            raise ConfigError(f"{name} is empty: expected {kind.expected} (unset it for "
                              f"the default, {_shown(spec.default)}).")
        try:
            values[spec.name] = kind.parse(raw)
        except ValueError as exc:
            shown = f"{name}={kind.shown(raw)}" if kind.shown else name
            raise ConfigError(f"{shown} is not valid ({exc}): expected "
                              f"{kind.expected}.") from None
    return values


def _shown(default: Any) -> str:
    return "empty" if default in ("", MISSING) else str(default).removesuffix(".0")


class Section:
    """The base of every section: built from the environment by :func:`parse`."""

    #: The section's heading in docs/operators.md, Configuration.
    title: ClassVar[str]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """This section's variables of ``environ`` (default ``os.environ``), parsed and
        validated; :class:`ConfigError` for the first bad value, in field order."""
        environ = os.environ if environ is None else environ
        return cls(**cls._completed(parse(cls, environ)))

    @classmethod
    def _completed(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with what the section derives from them (nothing, but for storage)."""
        return values
