"""A skipped URL's page key (a page robots.txt or the source policy refused in a crawl keeps
its change tracking version: ``storage.removed_pages``), and a monitor's summary (what a list
of monitors shows of its collection, whatever the collection's size).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("collection_skips") as table:
        table.add_column(sa.Column("page_key", sa.String(40)))
        table.create_index("ix_collection_skips_page", ["collection_id", "page_key"])
    with op.batch_alter_table("monitors") as table:
        table.add_column(sa.Column("summary", sa.Text))
    monitors = sa.table("monitors", sa.column("id"), sa.column("collection"),
                        sa.column("summary"))
    connection = op.get_bind()
    for row in connection.execute(sa.select(monitors.c.id, monitors.c.collection)).all():
        body = json.loads(row.collection)
        summary = {"mode": body.get("mode"), "extract": body.get("extract", "page"),
                   "url": body.get("url"), "url_count": len(body.get("urls") or ())}
        connection.execute(monitors.update().where(monitors.c.id == row.id)
                           .values(summary=json.dumps(summary)))


def downgrade() -> None:
    with op.batch_alter_table("monitors") as table:
        table.drop_column("summary")
    with op.batch_alter_table("collection_skips") as table:
        table.drop_index("ix_collection_skips_page")
        table.drop_column("page_key")
