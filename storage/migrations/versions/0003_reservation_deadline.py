"""Reservations carry their deadline and what their line of history needs, for the sweeper.

Reservations left open before this revision (the credits issue 9 found stuck) get a deadline
an hour after they were made, so the first sweeps give them back.

Revision ID: 0003
Revises: 0002_idempotency
Create Date: 2026-11-22
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002_idempotency"
branch_labels = None
depends_on = None

#: Deadline of a reservation left open before this revision, after its creation.
LEGACY_HOLD = timedelta(hours=1)


def upgrade() -> None:
    with op.batch_alter_table("ledger_entries") as table:
        table.add_column(sa.Column("expires_at", sa.DateTime(timezone=True)))
        table.add_column(sa.Column("operation", sa.String(40)))
        table.add_column(sa.Column("request_id", sa.String(64)))
        table.add_column(sa.Column("collection_id", sa.String(40)))
        table.add_column(sa.Column("url", sa.Text))
    # The sweeper's question: open reservations past their deadline.
    op.create_index("ix_ledger_entries_expires_at", "ledger_entries", ["expires_at"])
    _give_open_reservations_a_deadline()


def _give_open_reservations_a_deadline() -> None:
    entries = sa.table("ledger_entries", sa.column("id"), sa.column("charge_key"),
                       sa.column("phase"), sa.column("kind"),
                       sa.column("created_at", sa.DateTime(timezone=True)),
                       sa.column("expires_at", sa.DateTime(timezone=True)),
                       sa.column("request_id"))
    close = entries.alias("close")
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(entries.c.id, entries.c.charge_key, entries.c.created_at).where(
            entries.c.phase == "open", entries.c.kind == "reserve",
            ~sa.exists().where(close.c.charge_key == entries.c.charge_key,
                               close.c.phase == "close"))
    ).all()
    for entry_id, key, created_at in rows:
        request_id = key.removeprefix("request:") if key.startswith("request:") else None
        bind.execute(entries.update().where(entries.c.id == entry_id).values(
            expires_at=created_at + LEGACY_HOLD, request_id=request_id))


def downgrade() -> None:
    op.drop_index("ix_ledger_entries_expires_at", "ledger_entries")
    with op.batch_alter_table("ledger_entries") as table:
        for name in ("url", "collection_id", "request_id", "operation", "expires_at"):
            table.drop_column(name)
