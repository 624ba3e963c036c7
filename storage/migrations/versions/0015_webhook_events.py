"""Webhook events beyond "finished": a collection's ``webhook_events`` (which of its events
it asked for), many events per collection (``collection.started``, one ``collection.page`` per
stored page), events of an account (``account.low_balance``), and the account's low-balance
settings.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

#: Names the unnamed unique constraint of 0006 (``collection_id``) on SQLite, so batch mode
#: can drop it; PostgreSQL named it itself.
NAMING = {"uq": "uq_%(table_name)s_%(column_0_name)s"}


def _unique_name() -> str:
    sqlite = op.get_bind().dialect.name == "sqlite"
    return "uq_webhook_events_collection_id" if sqlite else "webhook_events_collection_id_key"


def upgrade() -> None:
    with op.batch_alter_table("webhook_events", naming_convention=NAMING) as table:
        table.drop_constraint(_unique_name(), type_="unique")
        table.alter_column("collection_id", existing_type=sa.String(40), nullable=True)
        table.create_index("ix_webhook_events_collection_id", ["collection_id"])
    with op.batch_alter_table("collections") as table:
        table.add_column(sa.Column("webhook_events", sa.String(200)))
    with op.batch_alter_table("accounts") as table:
        table.add_column(sa.Column("webhook_url", sa.Text))
        table.add_column(sa.Column("low_balance_threshold", sa.BigInteger))
        table.add_column(sa.Column("low_balance_notified", sa.Boolean, nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("accounts") as table:
        table.drop_column("low_balance_notified")
        table.drop_column("low_balance_threshold")
        table.drop_column("webhook_url")
    with op.batch_alter_table("collections") as table:
        table.drop_column("webhook_events")
    op.execute("DELETE FROM webhook_events WHERE collection_id IS NULL"
               " OR event IN ('collection.started', 'collection.page')")
    with op.batch_alter_table("webhook_events", naming_convention=NAMING) as table:
        table.drop_index("ix_webhook_events_collection_id")
        table.alter_column("collection_id", existing_type=sa.String(40), nullable=False)
        table.create_unique_constraint(_unique_name(), ["collection_id"])
