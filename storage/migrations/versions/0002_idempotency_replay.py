"""Idempotency records keep what a replay needs: the first response's headers and the request
that holds (or held) the key.

Revision ID: 0002_idempotency
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_idempotency"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_records") as table:
        table.add_column(sa.Column("request_id", sa.String(64)))
        table.add_column(sa.Column("response_headers", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("idempotency_records") as table:
        table.drop_column("response_headers")
        table.drop_column("request_id")
