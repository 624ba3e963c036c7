"""Collections and their results (issue 11).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

Time = sa.DateTime(timezone=True)
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "collections",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("extract", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("stop_reason", sa.String(40)),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("webhook_url", sa.Text),
        sa.Column("request_id", sa.String(64)),
        *(sa.Column(name, sa.Integer, nullable=False, server_default="0")
          for name in ("total", "succeeded", "failed", "robots_blocked", "credits_used")),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("started_at", Time),
        sa.Column("finished_at", Time),
        sa.Column("expires_at", Time),
    )
    op.create_index("ix_collections_account_id_created", "collections",
                    ["account_id", "created_at"])
    op.create_index("ix_collections_status", "collections", ["status"])
    op.create_index("ix_collections_expires_at", "collections", ["expires_at"])
    op.create_table(
        "collection_results",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("collection_id", sa.String(40),
                  sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("page_key", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("final_url", sa.Text),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_code", sa.Integer),
        sa.Column("fetched_at", sa.String(40)),
        sa.Column("error", sa.Text),
        sa.Column("data", sa.Text),
        sa.UniqueConstraint("collection_id", "page_key", name="uq_collection_results_page"),
        sa.UniqueConstraint("collection_id", "seq", name="uq_collection_results_seq"),
    )


def downgrade() -> None:
    op.drop_table("collection_results")
    op.drop_table("collections")
