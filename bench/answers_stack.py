"""The private stack bench/answers.py sends its requests to, and the raw HTTP it sends them with.

A redis-server, a SQLite database migrated and given its accounts by the operator commands
(``flask --app api db upgrade``, ``accounts create``) of the checkout under test, two warm
``python -m worker`` and the API under gunicorn from that checkout; the test site and the fake
SearXNG of *this* checkout (tests/support/site/server.py,
tests/support/fakes/search_providers.py) in their own processes, so both sides of a comparison
crawl and search the very same things.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from stack import ROOT, api_answers, stack_env, start, start_api, start_workers, wait_for

from launcher.embedded import free_port, start_redis

SITE_HOST = "127.0.0.2"
WORKERS = 2
FINAL = {"completed", "cancelled", "failed"}
#: The accounts every run creates afresh: name → (plan, credits).
ACCOUNTS = {"answers-main": ("standard", 1000), "answers-broke": ("standard", 0),
            "answers-collections": ("standard", 100)}

#: Run in the checkout under test: its own operator commands make the schema and the accounts.
_SETUP = """
import sys
from api import create_app
runner = create_app().test_cli_runner()
def run(*args):
    result = runner.invoke(args=list(args))
    if result.exit_code:
        sys.exit(f"{args}: {result.output}")
    return result.output
run("db", "upgrade")
for name, plan, credits in ACCOUNTS:
    print(name, run("accounts", "create", name, "--plan", plan, "--credits", str(credits))
          .strip().splitlines()[-1])
"""


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class Stack:
    api_port: int
    site_port: int
    search_port: int
    database: Path
    keys: dict[str, str] = field(default_factory=dict)

    @property
    def site(self) -> str:
        return f"http://{SITE_HOST}:{self.site_port}"

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 120) -> Answer:
        """One request on a connection of its own; the body as sent, not decompressed."""
        connection = http.client.HTTPConnection("127.0.0.1", self.api_port, timeout=timeout)
        try:
            connection.putrequest(method, path, skip_accept_encoding=True)
            sent = dict(headers or {})
            if body is not None:
                sent.setdefault("Content-Length", str(len(body)))
            for name, value in sent.items():
                connection.putheader(name, value)
            connection.endheaders(body)
            response = connection.getresponse()
            return Answer(response.status, response.getheaders(), response.read())
        finally:
            connection.close()

    def wait_final(self, collection_id: str, timeout: float = 120) -> None:
        """Until the collection is final, read in the database: polling the API would count
        against the account's rate and make its ``RateLimit-Remaining`` vary."""
        def final() -> bool:
            with sqlite3.connect(f"file:{self.database}?mode=ro", uri=True) as connection:
                row = connection.execute("SELECT status FROM collections WHERE id = ?",
                                         (collection_id,)).fetchone()
            return bool(row) and row[0] in FINAL
        wait_for(final, f"collection {collection_id} to finish", timeout)


def start_stack(tree: Path, tmp: Path, procs: list[subprocess.Popen]) -> Stack:
    """Everything started (kept in ``procs``) and answering; the stack's addresses and keys."""
    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    database = tmp / "answers.db"
    site_port, search_port = free_port(), free_port()
    site = f"http://{SITE_HOST}:{site_port}"
    env = stack_env(redis_url, f"sqlite:///{database}",
                    CRAWLER_ALLOWED_NETWORKS=f"{SITE_HOST}/32", SEARCH_PROVIDER="searxng",
                    SEARXNG_URL=f"http://127.0.0.1:{search_port}", YOUTUBE_BASE_URL=site,
                    YOUTUBE_API_URL=f"{site}/youtube/v3", YOUTUBE_API_KEY="")
    start([sys.executable, "-m", "tests.support.site.server", SITE_HOST, str(site_port)],
          env, procs)
    start([sys.executable, "-m", "tests.support.fakes.search_providers", "searxng",
           str(search_port)], env, procs)
    accounts = [(name, plan, credits) for name, (plan, credits) in ACCOUNTS.items()]
    made = subprocess.run([sys.executable, "-c", f"ACCOUNTS = {accounts!r}\n{_SETUP}"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    if made.returncode:
        raise SystemExit(f"Could not set up the database in {tree}:\n{made.stderr[-2000:]}")
    keys = dict(line.split(" ", 1) for line in made.stdout.strip().splitlines())
    start_workers(WORKERS, env, procs, cwd=tree)
    stack = Stack(start_api(env, procs, cwd=tree), site_port, search_port, database, keys)
    for host, port, what in ((SITE_HOST, site_port, "the test site"),
                             ("127.0.0.1", search_port, "the fake SearXNG")):
        wait_for(lambda h=host, p=port: _listens(h, p), what)
    wait_for(lambda: api_answers(stack.api_port), "the API", 120)
    wait_for(lambda: _ready(stack, redis_url), f"{WORKERS} workers", 120)
    return stack


def _ready(stack: Stack, redis_url: str) -> bool:
    """The workers listen (in Redis) and ``/healthz`` says so (per queue, where it counts)."""
    from redis import Redis
    from rq import Worker

    if len(Worker.all(connection=Redis.from_url(redis_url))) < WORKERS:
        return False
    answer = stack.request("GET", "/healthz", timeout=5)
    workers = json.loads(answer.body).get("workers") if answer.status == 200 else {}
    return not isinstance(workers, dict) or min(workers.values(), default=0) >= WORKERS


def _listens(host: str, port: int) -> bool:
    connection = http.client.HTTPConnection(host, port, timeout=2)
    try:
        connection.request("GET", "/robots.txt")
        connection.getresponse().read()
        return True
    finally:
        connection.close()


def tree_commit(tree: Path) -> str:
    found = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True,
                           text=True)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"],
                           capture_output=True, text=True).stdout.strip()
    return found.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


if __name__ == "__main__":  # a smoke run: start, print where, stop
    import tempfile

    from stack import stop

    own: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="webdata-answers-") as directory:
        try:
            print(start_stack(ROOT, Path(directory), own))
        finally:
            stop(own)
