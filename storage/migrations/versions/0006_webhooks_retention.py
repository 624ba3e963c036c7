"""Webhooks and retention (issue 12): the outbox of webhook events, the account's previous
signing secret (it signs for a day after a rotation), and when a collection's results were
purged.

The secrets made before this revision were ``whsec_`` + URL-safe base64, which Standard
Webhooks libraries decode as standard base64 (dropping ``-`` and ``_``): a receiver would
verify with a different key. Nobody could have seen them (no endpoint showed them), so each
account gets a new one in the Standard Webhooks form.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import base64
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("accounts") as table:
        table.add_column(sa.Column("previous_webhook_secret", sa.String(80)))
        table.add_column(sa.Column("webhook_secret_rotated_at", Time))
    accounts = sa.table("accounts", sa.column("id"), sa.column("webhook_secret"))
    connection = op.get_bind()
    for (account_id,) in connection.execute(sa.select(accounts.c.id)).all():
        secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
        connection.execute(accounts.update().where(accounts.c.id == account_id)
                           .values(webhook_secret=secret))
    with op.batch_alter_table("collections") as table:
        table.add_column(sa.Column("purged_at", Time))
    op.create_table(
        "webhook_events",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("collection_id", sa.String(40),
                  sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_status", sa.Integer),
        sa.Column("last_error", sa.Text),
        sa.Column("next_attempt_at", Time),
        sa.Column("claimed_until", Time),
        sa.Column("delivered_at", Time),
    )
    op.create_index("ix_webhook_events_due", "webhook_events", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_events_due", table_name="webhook_events")
    op.drop_table("webhook_events")
    with op.batch_alter_table("collections") as table:
        table.drop_column("purged_at")
    with op.batch_alter_table("accounts") as table:
        table.drop_column("webhook_secret_rotated_at")
        table.drop_column("previous_webhook_secret")
