"""The history says how each request came: ``channel`` (api, console, mcp; null for a line
the platform wrote itself, and for the lines before this revision).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("activity") as table:
        table.add_column(sa.Column("channel", sa.String(16)))


def downgrade() -> None:
    with op.batch_alter_table("activity") as table:
        table.drop_column("channel")
