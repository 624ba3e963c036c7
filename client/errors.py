"""What can go wrong when talking to the service, as exceptions batch code can catch.

One base class, :class:`WebdataError`, so that a caller (and the ``webdata`` command, which
prints the message and exits non-zero instead of a traceback) needs one ``except``.
"""

from __future__ import annotations

from typing import Any

#: The ``code`` of an answer not in the API's error shape (a proxy's HTML page, say).
NOT_THE_API = "http_error"


class WebdataError(Exception):
    """Anything the client could not do; ``str()`` is a sentence for a person."""


class ConfigurationError(WebdataError):
    """The client cannot start: no API key, an unusable service URL, an unknown format."""


class OutputError(WebdataError):
    """A file of results cannot be written where it was asked for (a folder of that name, a
    folder gone, a disk full)."""


class Unreachable(WebdataError):
    """The service did not answer (refused, reset, timed out) after every retry."""


class ApiError(WebdataError):
    """The service answered with an error (docs/api.md, Errors: the one error shape).

    ``code`` is the stable machine code (``insufficient_credits``, ``not_found``…), ``status``
    the HTTP status, ``errors`` the field-level messages of a 422.
    """

    def __init__(self, status: int, code: str, message: str, *,
                 errors: dict[str, Any] | None = None, request_id: str | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.errors = errors or {}
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        text = self.message if self.code == NOT_THE_API else (
            f"{self.message} ({self.code}, HTTP {self.status})")
        fields = "; ".join(f"{name}: {detail}" for name, detail in _flat(self.errors))
        return f"{text} {fields}" if fields else text


class WaitTimeout(WebdataError):
    """:meth:`client.Client.wait` gave up; the collection goes on (``collection_id``)."""

    def __init__(self, collection_id: str, seconds: float):
        super().__init__(f"Collection {collection_id} is not finished after {seconds:g} s; "
                         "it goes on.")
        self.collection_id = collection_id


def _flat(errors: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A 422's nested ``errors`` (``{"urls": {"1": ["Not a valid URL."]}}``) as
    ``[("urls.1", "Not a valid URL.")]``: one line a user can act on."""
    if isinstance(errors, dict):
        flat: list[tuple[str, str]] = []
        for key, value in errors.items():
            flat += _flat(value, f"{prefix}.{key}" if prefix else str(key))
        return flat
    if isinstance(errors, list) and all(isinstance(item, str) for item in errors):
        return [(prefix, " ".join(errors))]
    return [(prefix, str(errors))]
