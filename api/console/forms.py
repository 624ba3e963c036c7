"""Console forms that are sent once: a double click or a reload of the answer does not do
the thing twice (start a collection, make a key, rotate the secret).

Each form carries a random ``form_id``; the POST claims it before anything is done, as the
API claims an ``Idempotency-Key`` (the same records, kept a day, taken over from a request
that died). A form sent again finds its claim: done already, or still being done.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import g
from marshmallow import ValidationError

from api import idempotency
from api.extensions import db
from storage import idempotency as records

#: A form's id (``secrets.token_urlsafe(16)``), and its idempotency records' prefix.
FORM_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
FORM_KEY = "console-form:"


def new_form_id() -> str:
    return secrets.token_urlsafe(16)


def claim(form_id: str) -> records.Outcome | None:
    """This sending of the form ``form_id``; None for a hand-made form without an id."""
    if not FORM_ID.fullmatch(form_id):
        return None
    return records.claim(db(), g.principal.account_id, f"{FORM_KEY}{form_id}", FORM_KEY,
                         g.request_id, abandoned_after=idempotency.abandoned_after())


def done(claimed: records.Outcome | None, what: str) -> None:
    """Record the claimed sending as done, ``what`` saying what it did (never a secret: a
    replay shows it)."""
    if isinstance(claimed, records.Claimed):
        records.complete(db(), claimed, records.StoredResponse(200, what, {}))


def release(claimed: records.Outcome | None) -> None:
    """Forget the claimed sending: it did nothing (refused, or failed), and sent again once
    mended (a reload included) it runs."""
    if isinstance(claimed, records.Claimed):
        records.release(db(), claimed)


@contextmanager
def once(claimed: records.Outcome | None, what: str) -> Iterator[None]:
    """The ``with`` block is the claimed sending's work: :func:`done` (``what``) when it ends,
    :func:`release` when it raises (nothing was made)."""
    try:
        yield
    except BaseException:
        release(claimed)
        raise
    done(claimed, what)


def sent_already(claimed: records.Outcome | None) -> bool:
    """Whether the form was sent before (done, or still being done)."""
    return claimed is not None and not isinstance(claimed, records.Claimed)


def whole_numbers(form: Any, names: Iterable[str]) -> dict[str, int]:
    """The form's fields ``names`` that are filled in, as whole numbers (an empty field is
    left out: the API's default); ``ValidationError`` naming a field that is not one."""
    numbers: dict[str, int] = {}
    for name in names:
        raw = form.get(name, "").strip()
        if raw:
            try:
                numbers[name] = int(raw)
            except ValueError:
                raise ValidationError({name: ["Not a whole number."]}) from None
    return numbers
