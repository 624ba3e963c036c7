"""Opaque pagination cursors: ``kind:value`` in URL-safe base64.

Every list of the API pages with one (the history, the collections, a collection's results).
The kind says which list issued it, so a cursor of one list is refused by another (422), as is
anything this API did not return.
"""

from __future__ import annotations

import base64
import binascii

from api.errors import ApiError
from core.cursors import encode

__all__ = ["MAX_ROW_ID", "decode", "decode_id", "encode", "invalid"]

#: Row ids and positions are 64-bit signed integers on both databases; a larger number
#: reaches the driver as an OverflowError (a 500), so it is refused as a cursor this API did
#: not return.
MAX_ROW_ID = 2**63


def invalid() -> ApiError:
    return ApiError("validation_error", "Invalid request: check cursor.",
                    errors={"cursor": ["Not a cursor this API returned."]})


def decode(kind: str, cursor: str) -> str:
    """The value of a cursor of ``kind``; 422 for anything else."""
    try:
        found, _, value = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise invalid() from None
    if found != kind or not value:
        raise invalid()
    return value


def decode_id(kind: str, cursor: str, lowest: int = 1) -> int:
    """A cursor of ``kind`` holding a row id or a position (``lowest`` to 2**63 - 1). A list
    that answers an empty page with "the start" as its cursor (a collection's results, polled
    before anything is stored) takes 0 back."""
    try:
        number = int(decode(kind, cursor))
    except ValueError:
        raise invalid() from None
    if not lowest <= number < MAX_ROW_ID:
        raise invalid()
    return number
