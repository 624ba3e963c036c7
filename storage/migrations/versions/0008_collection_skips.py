"""Skipped URLs: every URL a collection saw and did not fetch, with its reason,
and the counts by reason on the collection.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("collections") as table:
        table.add_column(sa.Column("skipped", sa.Text))
    op.create_table(
        "collection_skips",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("collection_id", sa.String(40),
                  sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("duplicate_of", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("collection_id", "seq", name="uq_collection_skips_seq"),
    )


def downgrade() -> None:
    op.drop_table("collection_skips")
    with op.batch_alter_table("collections") as table:
        table.drop_column("skipped")
