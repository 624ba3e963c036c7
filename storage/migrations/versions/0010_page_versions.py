"""Change tracking: the latest version of each page an account tracks under a tag, each
result's change against it, and a collection's counts by change.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "page_versions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("tag", sa.String(100), nullable=False),
        sa.Column("page_key", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("fetched_at", sa.String(40)),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("collection_id", sa.String(40), nullable=False),
        sa.UniqueConstraint("account_id", "tag", "page_key", name="uq_page_versions_page"),
    )
    with op.batch_alter_table("collection_results") as table:
        table.add_column(sa.Column("change", sa.Text))
    with op.batch_alter_table("collections") as table:
        table.add_column(sa.Column("changes", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("collections") as table:
        table.drop_column("changes")
    with op.batch_alter_table("collection_results") as table:
        table.drop_column("change")
    op.drop_table("page_versions")
