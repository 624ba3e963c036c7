"""Operator commands: ``flask --app api accounts|keys|db …``."""

from __future__ import annotations

import secrets

import click
from flask import Flask, current_app
from flask.cli import AppGroup

from storage import accounts, ledger
from storage.db import Database, migrate

accounts_cli = AppGroup("accounts", help="Create and inspect accounts, grant credits.")
keys_cli = AppGroup("keys", help="Create and revoke API keys.")
db_cli = AppGroup("db", help="Database schema.")


def _db() -> Database:
    return current_app.extensions["webdata.db"]


def _fail(exc: Exception) -> None:
    raise click.ClickException(str(exc))


@accounts_cli.command("create")
@click.argument("name")
@click.option("--credits", "credits_", type=click.IntRange(min=0, max=ledger.MAX_BALANCE),
              default=0, show_default=True)
@click.option("--plan", default=accounts.DEFAULT_PLAN, show_default=True)
def create_account(name: str, credits_: int, plan: str) -> None:
    """Create account NAME with its first API key (printed on the last line)."""
    try:
        with _db().write() as session:
            account = accounts.create_account(session, name, plan)
            key = accounts.create_key(session, account)
            account_id = account.id
    except accounts.AccountError as exc:
        _fail(exc)
    if credits_:
        ledger.grant(_db(), account_id, credits_, f"grant:{secrets.token_hex(8)}")
    click.echo(f"Account {name} ({account_id}), plan {plan}, {credits_} credits.")
    click.echo(key)


# ignore_unknown_options: without it click reads the "-500" of ``credit acme -500`` as an
# (unknown) option; with it, an argument that looks like an option is left to AMOUNT.
@accounts_cli.command("credit", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("amount", type=int)
def credit_account(name: str, amount: int) -> None:
    """Grant AMOUNT credits to NAME (negative to take them back, e.g. -500)."""
    try:
        with _db().session() as session:
            account_id = accounts.get_account(session, name).id
        balance = ledger.grant(_db(), account_id, amount, f"grant:{secrets.token_hex(8)}")
    except accounts.AccountError as exc:
        _fail(exc)
    except ledger.InsufficientCredits as exc:
        raise click.ClickException(
            f"Cannot take back {-amount} credits: {name} has {exc.balance}.") from None
    except ledger.TooManyCredits as exc:
        _fail(exc)
    click.echo(f"{name}: balance {balance}.")


@accounts_cli.command("show")
@click.argument("name")
def show_account(name: str) -> None:
    """Plan (with its limits), balance and keys of NAME."""
    try:
        with _db().session() as session:
            account = accounts.get_account(session, name)
            click.echo(f"id       {account.id}")
            click.echo(f"name     {account.name}")
            plan = account.plan
            click.echo(f"plan     {plan.name} ({plan.requests_per_minute} requests a minute, "
                       f"{plan.max_concurrent_requests} in flight at once, maps of "
                       f"{plan.max_map_urls} URLs)")
            click.echo(f"balance  {account.balance}")
            for key in accounts.list_keys(session, account.id):
                state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "live"
                click.echo(f"key      {key.prefix}…  created {key.created_at:%Y-%m-%d}  {state}")
    except accounts.AccountError as exc:
        _fail(exc)


@keys_cli.command("create")
@click.argument("name")
def create_key(name: str) -> None:
    """A new API key for account NAME (printed on the last line)."""
    try:
        with _db().write() as session:
            key = accounts.create_key(session, accounts.get_account(session, name))
    except accounts.AccountError as exc:
        _fail(exc)
    click.echo(key)


@keys_cli.command("revoke")
@click.argument("key_prefix")
def revoke_key(key_prefix: str) -> None:
    """Revoke the key that starts with KEY_PREFIX (as shown by ``accounts show``)."""
    try:
        with _db().write() as session:
            accounts.revoke_keys(session, key_prefix)
    except accounts.AccountError as exc:
        _fail(exc)
    click.echo(f"Revoked {key_prefix}…")


@db_cli.command("upgrade")
def upgrade() -> None:
    """Apply the Alembic migrations to DATABASE_URL."""
    migrate(_db().url)
    click.echo("Database is up to date.")


def register_cli(app: Flask) -> None:
    for group in (accounts_cli, keys_cli, db_cli):
        app.cli.add_command(group)
