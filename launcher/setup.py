"""``python -m launcher.setup``: ``make run``'s one-off preparation, in a process of its own:
the database migrated, the demo account made the first time, and its key printed.

A process apart so that the supervisor, which lives as long as the stack, never imports the
API, the storage or SQLAlchemy: they would stay in its memory for nothing (docs/benchmarks.md,
Memory of the default stack).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from core.config import load_or_exit

DEMO_ACCOUNT = "demo"
DEMO_CREDITS = 1000
#: The operator's own try-out account: the top plan (6,000 requests a minute, 48 in flight:
#: three quarters of a default ``make run``'s 2 x 32 worker slots), so the demo key can run
#: ../shared/tools/quality.py or bench-like loads without answering 429.
DEMO_PLAN = "enterprise"


def write_private(path: Path, line: str) -> None:
    """``line`` in ``path``, readable by this user only from its creation on: the embedded
    Redis's URL (it reaches an unauthenticated Redis), the demo key."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(line + "\n")


def demo_key(app, var_dir: Path) -> str:
    """The demo account's key, kept in var/demo-key (created with the account)."""
    from storage import accounts, ledger

    key_file = var_dir / "demo-key"
    db = app.extensions["webdata.db"]
    saved = key_file.read_text().strip() if key_file.exists() else ""
    with db.write() as session:
        if saved and accounts.authenticate(session, saved):
            return saved
        try:
            account = accounts.get_account(session, DEMO_ACCOUNT)
            fresh = False
        except accounts.AccountError:
            account = accounts.create_account(session, DEMO_ACCOUNT, DEMO_PLAN)
            fresh = True
        key = accounts.create_key(session, account)
        account_id = account.id
    if fresh:
        ledger.grant(db, account_id, DEMO_CREDITS, "grant:demo")
    write_private(key_file, key)
    return key


def main() -> None:
    config = load_or_exit()
    from api import create_app
    from storage.db import migrate

    migrate(config.storage.database_url)
    print(demo_key(create_app(config), config.storage.var_dir), flush=True)


if __name__ == "__main__":
    main()
