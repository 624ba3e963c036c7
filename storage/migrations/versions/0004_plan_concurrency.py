"""Plans cap the single-page requests an account has in flight (``max_concurrent_requests``).

Issue 10: ten slow requests of one account held every worker slot and another account's
request waited 58 s. Each seeded plan gets a cap sized on its request rate (Little's law: rate times
a page's usual 1-2 s) and on the 64 worker slots of a default ``make run`` (2 processes of 32):

- ``free`` 4: its 60 requests a minute at up to 4 s a page; 1/16 of the slots;
- ``standard`` 16: its 600 a minute (10 a second) at 1.5 s a page; four such accounts busy at
  once still leave every other account its slots;
- ``enterprise`` 48: 3/4 of the slots, leaving 16 to everyone else.

Any other plan (made by an operator) gets the server default, 4. A cap is at least 1 (a CHECK):
0 would make every request of the plan wait out its deadline, and "unlimited" is a number above
the deployment's slots.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

#: The cap of each seeded plan; other plans keep :data:`DEFAULT`.
CAPS = {"free": 4, "standard": 16, "enterprise": 48}
DEFAULT = 4
CHECK = "ck_plans_max_concurrent_requests_positive"


def upgrade() -> None:
    with op.batch_alter_table("plans") as table:
        table.add_column(sa.Column("max_concurrent_requests", sa.Integer, nullable=False,
                                   server_default=str(DEFAULT)))
        table.create_check_constraint(CHECK, "max_concurrent_requests >= 1")
    plans = sa.table("plans", sa.column("name"), sa.column("max_concurrent_requests"))
    for name, cap in CAPS.items():
        op.execute(plans.update().where(plans.c.name == name)
                   .values(max_concurrent_requests=cap))


def downgrade() -> None:
    with op.batch_alter_table("plans") as table:
        table.drop_constraint(CHECK, type_="check")
        table.drop_column("max_concurrent_requests")
