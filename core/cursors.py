"""The encoding of the API's pagination cursors (``kind:value`` in URL-safe base64), declared
once: the API issues and reads them (:mod:`api.cursors`), and storage writes one into each
``collection.page`` webhook event (its ``result_url``)."""

from __future__ import annotations

import base64

#: The kind of a collection's results cursor.
RESULTS = "r"


def encode(kind: str, value: object) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode()
