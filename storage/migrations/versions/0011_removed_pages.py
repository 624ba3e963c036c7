"""Change tracking, second part: the pages a completed tracked collection did not find again
(``collection_removed``, deleted with the collection's results), and when each page's version
was last written (``page_versions.written_at``: versions are deleted some days after it).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

from datetime import UTC, datetime

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
    with op.batch_alter_table("page_versions") as table:
        table.add_column(sa.Column("written_at", sa.DateTime(timezone=True)))
    # the versions kept so far count as written now: their retention starts with this release
    op.get_bind().execute(sa.text("UPDATE page_versions SET written_at = :now"),
                          {"now": datetime.now(UTC)})
    with op.batch_alter_table("page_versions") as table:
        table.alter_column("written_at", existing_type=sa.DateTime(timezone=True),
                           nullable=False)
        table.create_index("ix_page_versions_written_at", ["written_at"])


def downgrade() -> None:
    with op.batch_alter_table("page_versions") as table:
        table.drop_index("ix_page_versions_written_at")
        table.drop_column("written_at")
    op.drop_table("collection_removed")
