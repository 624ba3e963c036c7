"""Plans cap the URLs one ``POST /map`` answers with (``max_map_urls``, issue 29).

A map's answer is held whole in a worker's memory and in the client's: ``free`` 5,000 (the
operation's default ``limit``), ``standard`` 50,000 (one full sitemap file), ``enterprise``
100,000. Any other plan (made by an operator) gets the server default, 5,000.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

#: The cap of each seeded plan; other plans keep :data:`DEFAULT`.
CAPS = {"free": 5000, "standard": 50_000, "enterprise": 100_000}
DEFAULT = 5000


def upgrade() -> None:
    with op.batch_alter_table("plans") as table:
        table.add_column(sa.Column("max_map_urls", sa.Integer, nullable=False,
                                   server_default=str(DEFAULT)))
    plans = sa.table("plans", sa.column("name"), sa.column("max_map_urls"))
    for name, cap in CAPS.items():
        op.execute(plans.update().where(plans.c.name == name).values(max_map_urls=cap))


def downgrade() -> None:
    with op.batch_alter_table("plans") as table:
        table.drop_column("max_map_urls")
