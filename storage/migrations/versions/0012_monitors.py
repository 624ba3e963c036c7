"""Monitors: a collection re-run on a schedule (its runs, a collection's monitor), and the
plans' ``max_monitors``: ``free`` 2, ``standard`` 20, ``enterprise`` 200 (any other plan: 2).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

#: The cap of each seeded plan; other plans keep :data:`DEFAULT`.
CAPS = {"free": 2, "standard": 20, "enterprise": 200}
DEFAULT = 2
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("plans") as table:
        table.add_column(sa.Column("max_monitors", sa.Integer, nullable=False,
                                   server_default=str(DEFAULT)))
    plans = sa.table("plans", sa.column("name"), sa.column("max_monitors"))
    for name, cap in CAPS.items():
        op.execute(plans.update().where(plans.c.name == name).values(max_monitors=cap))
    with op.batch_alter_table("collections") as table:
        table.add_column(sa.Column("monitor_id", sa.String(40)))
        table.create_index("ix_collections_monitor_id", ["monitor_id"])
    op.create_table(
        "monitors",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False,
                  index=True),
        sa.Column("name", sa.String(200)),
        sa.Column("collection", sa.Text, nullable=False),
        sa.Column("schedule", sa.Text, nullable=False),
        sa.Column("webhook_url", sa.Text),
        sa.Column("notify", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("paused_reason", sa.String(40)),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_monitors_due", "monitors", ["status", "next_run_at"])
    op.create_table(
        "monitor_runs",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("monitor_id", sa.String(40),
                  sa.ForeignKey("monitors.id", ondelete="CASCADE"), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("collection_id", sa.String(40), index=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(40)),
        sa.Column("message", sa.Text),
        sa.Column("changes", sa.Text),
        sa.Column("pages", sa.Integer, nullable=False, server_default="0"),
        sa.Column("credits_used", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_monitor_runs_monitor", "monitor_runs", ["monitor_id", "id"])


def downgrade() -> None:
    op.drop_table("monitor_runs")
    op.drop_table("monitors")
    with op.batch_alter_table("collections") as table:
        table.drop_index("ix_collections_monitor_id")
        table.drop_column("monitor_id")
    with op.batch_alter_table("plans") as table:
        table.drop_column("max_monitors")
