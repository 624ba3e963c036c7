"""Accounts, plans, API keys, the credit ledger, activity and idempotency records.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Time = sa.DateTime(timezone=True)

PLANS = [
    # name, requests/minute, batch URLs, crawl pages, running collections
    ("free", 60, 100, 100, 1),
    ("standard", 600, 1000, 1000, 5),
    ("enterprise", 6000, 10000, 10000, 20),
]


def upgrade() -> None:
    plans = op.create_table(
        "plans",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("requests_per_minute", sa.Integer, nullable=False),
        sa.Column("max_batch_urls", sa.Integer, nullable=False),
        sa.Column("max_crawl_pages", sa.Integer, nullable=False),
        sa.Column("max_running_collections", sa.Integer, nullable=False),
    )
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("balance", sa.BigInteger, nullable=False),
        sa.Column("webhook_secret", sa.String(80), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.CheckConstraint("balance >= 0", name="ck_accounts_balance_not_negative"),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("prefix", sa.String(32), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("revoked_at", Time),
    )
    op.create_index("ix_api_keys_account_id", "api_keys", ["account_id"])
    op.create_index("ix_api_keys_prefix", "api_keys", ["prefix"])
    op.create_table(
        "ledger_entries",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("charge_key", sa.String(120), nullable=False),
        sa.Column("phase", sa.String(8), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.UniqueConstraint("charge_key", "phase", name="uq_ledger_charge_phase"),
    )
    op.create_index("ix_ledger_entries_account_id", "ledger_entries", ["account_id"])
    op.create_table(
        "activity",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("at", Time, nullable=False),
        sa.Column("operation", sa.String(40), nullable=False),
        sa.Column("credits", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("request_id", sa.String(64)),
        sa.Column("collection_id", sa.String(40)),
        sa.Column("url", sa.Text),
        sa.Column("error", sa.String(40)),
    )
    op.create_index("ix_activity_account_id_id", "activity", ["account_id", "id"])
    op.create_table(
        "idempotency_records",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("account_id", sa.String(40), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("response_status", sa.Integer),
        sa.Column("response_body", sa.Text),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("expires_at", Time, nullable=False),
        sa.UniqueConstraint("account_id", "key", name="uq_idempotency_account_key"),
    )
    op.create_index("ix_idempotency_records_expires_at", "idempotency_records", ["expires_at"])
    op.bulk_insert(plans, [
        {"name": n, "requests_per_minute": r, "max_batch_urls": b, "max_crawl_pages": p,
         "max_running_collections": c}
        for n, r, b, p, c in PLANS
    ])


def downgrade() -> None:
    for table in ("idempotency_records", "activity", "ledger_entries", "api_keys", "accounts",
                  "plans"):
        op.drop_table(table)
