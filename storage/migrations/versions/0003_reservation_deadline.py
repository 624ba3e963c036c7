"""Reservations carry their deadline and what their line of history needs, for the sweeper.

Revision ID: 0003
Revises: 0002_idempotency
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002_idempotency"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ledger_entries") as table:
        table.add_column(sa.Column("expires_at", sa.DateTime(timezone=True)))
        table.add_column(sa.Column("operation", sa.String(40)))
        table.add_column(sa.Column("request_id", sa.String(64)))
        table.add_column(sa.Column("collection_id", sa.String(40)))
        table.add_column(sa.Column("url", sa.Text))
    # The sweeper's question: open reservations past their deadline.
    op.create_index("ix_ledger_entries_expires_at", "ledger_entries", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_ledger_entries_expires_at", "ledger_entries")
    with op.batch_alter_table("ledger_entries") as table:
        for name in ("url", "collection_id", "request_id", "operation", "expires_at"):
            table.drop_column(name)
