"""The page cache: successful answers of page operations, shared, size-capped; and the
history's mark of an answer that came from it.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "page_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("operation", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("cached_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("etag", sa.Text),
        sa.Column("last_modified", sa.Text),
    )
    op.create_index("ix_page_cache_used_at", "page_cache", ["used_at"])
    total = op.create_table(
        "page_cache_total",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("bytes", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(total, [{"id": 1, "bytes": 0}])
    with op.batch_alter_table("activity") as table:
        table.add_column(sa.Column("cached", sa.Boolean, nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("activity") as table:
        table.drop_column("cached")
    op.drop_table("page_cache_total")
    op.drop_index("ix_page_cache_used_at", table_name="page_cache")
    op.drop_table("page_cache")
