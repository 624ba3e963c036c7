"""Change tracking, second part: the pages a completed tracked collection did not find again
(``collection_removed``, deleted with the collection's results).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "collection_removed",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("collection_id", sa.String(40),
                  sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("page_key", sa.String(40), nullable=False),
        sa.Column("previous_fetched_at", sa.String(40)),
        sa.UniqueConstraint("collection_id", "seq", name="uq_collection_removed_seq"),
    )


def downgrade() -> None:
    op.drop_table("collection_removed")
