"""Print a PostgreSQL URL for the test suite when a server answers on 127.0.0.1:5432.

``make test`` runs this when TEST_DATABASE_URL is unset; the suite then creates its own
databases (``webdata_test_*``) on that server and drops nothing else. Prints nothing (and the
suite runs on SQLite only) when no server answers.
"""

from __future__ import annotations

import os

SERVER = os.environ.get("TEST_POSTGRES_SERVER", "postgresql://postgres@127.0.0.1:5432/postgres")


def main() -> None:
    try:
        import psycopg2

        psycopg2.connect(SERVER, connect_timeout=3).close()
    except Exception:
        return
    print(SERVER.rsplit("/", 1)[0] + "/webdata_test")


if __name__ == "__main__":
    main()
