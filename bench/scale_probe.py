"""What bench/scale.py reads besides the API: the site's reachable pages, the frontier and
Redis's memory, the workers' memory, the database's rows and size, nginx's access log."""

from __future__ import annotations

import contextlib
import re
from collections import Counter, deque
from pathlib import Path
from typing import Any

from default_stack import memory

#: The site's own links (``/p/…``, ``/section/…``; ``/private/`` is robots-disallowed) and a
#: page's ``rel=canonical`` (make_site.py writes ``href`` right after ``rel``).
LINK = re.compile(rb'href="(/(?:p|section)/[0-9]+\.html)"')
CANONICAL = re.compile(rb'<link rel="canonical" href="([^"]+)"')


def reachable(root: Path, max_depth: int) -> dict[str, int]:
    """The site's pages a crawl from ``/`` reaches within ``max_depth`` hops, read from the
    generated files (breadth first): URLs fetched, and the distinct pages among them once
    ``rel=canonical`` is followed (a section page is a ``/p/`` page under another address):
    what the crawl should store, each once."""
    seen, keys = {"/": 0}, {"/"}
    todo: deque[str] = deque(["/"])
    while todo:
        path = todo.popleft()
        html = (root / ("index.html" if path == "/" else path.lstrip("/"))).read_bytes()
        canonical = CANONICAL.search(html)
        keys.add(canonical.group(1).decode() if canonical else path)
        if seen[path] == max_depth:
            continue
        for link in LINK.findall(html):
            target = link.decode()
            if target not in seen:
                seen[target] = seen[path] + 1
                todo.append(target)
    return {"urls": len(seen), "pages": len(keys), "deepest": max(seen.values())}


def frontier_sizes(redis: Any, collection_id: str) -> dict[str, int]:
    """The frontier's lengths (collecting/frontier.py's keys): queued, seen, leased, past the
    budget, and its ``admitted`` counter."""
    base = f"webdata:collection:{collection_id}:"
    pipe = redis.pipeline(transaction=False)
    pipe.llen(base + "queue")
    pipe.scard(base + "seen")
    pipe.zcard(base + "leases")
    pipe.llen(base + "overflow")
    pipe.hget(base + "meta", "admitted")
    queued, seen, leased, overflow, admitted = pipe.execute()
    return {"queued": queued, "seen": seen, "leased": leased, "overflow": overflow,
            "admitted": int(admitted or 0)}


def redis_keys(redis: Any) -> dict[str, tuple[int, int]]:
    """The largest groups of keys: their memory in bytes (``MEMORY USAGE … SAMPLES 0``:
    exact) and the longest time to live among them (s; -1: none), by key name with the ids
    taken out."""
    groups: Counter[str] = Counter()
    ttls: dict[str, int] = {}
    for key in redis.scan_iter(count=1000):
        name = key.decode()
        group = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{32}|col_[A-Za-z0-9]+", "<id>", name)
        groups[group] += redis.memory_usage(key, samples=0) or 0
        ttl = redis.ttl(key)
        ttls[group] = -1 if -1 in (ttl, ttls.get(group)) else max(ttl, ttls.get(group, ttl))
    return {group: (size, ttls[group]) for group, size in groups.most_common(8)}


def used_memory(redis: Any) -> int:
    return int(redis.info("memory")["used_memory"])


def workers_memory(pool_pid: int) -> dict[str, dict[str, float]]:
    """RSS, PSS and private MiB of the worker pool's parent and each fork (by pid)."""
    import psutil

    found = {"parent": memory(pool_pid)}
    for child in psutil.Process(pool_pid).children():
        with contextlib.suppress(OSError):
            found[str(child.pid)] = memory(child.pid)
    return found


def stored(database_url: str, collection_id: str) -> dict[str, Any]:
    """The collection's result rows against their distinct URLs, page keys and final URLs,
    by status; the database's size (PostgreSQL: ``pg_database_size`` and the results table
    with its indexes and TOAST; SQLite: the file with its ``-wal``)."""
    from sqlalchemy import func, select, text

    from storage.db import Database
    from storage.models import CollectionResult as R

    db = Database(database_url)
    try:
        with db.session() as session:
            rows, urls, keys, finals = session.execute(
                select(func.count(), func.count(func.distinct(R.url)),
                       func.count(func.distinct(R.page_key)),
                       func.count(func.distinct(R.final_url)))
                .where(R.collection_id == collection_id)).one()
            statuses = dict(session.execute(
                select(R.status, func.count()).where(R.collection_id == collection_id)
                .group_by(R.status)).all())
            sizes = {}
            if database_url.startswith("postgresql"):
                sizes["database"] = session.scalar(
                    text("SELECT pg_database_size(current_database())"))
                sizes["results_table"] = session.scalar(
                    text("SELECT pg_total_relation_size('collection_results')"))
    finally:
        db.dispose()
    if not sizes:
        path = Path(database_url.removeprefix("sqlite:///"))
        sizes["database"] = sum(p.stat().st_size for p in (path, Path(f"{path}-wal"))
                                if p.exists())
    return {"rows": rows, "distinct_urls": urls, "distinct_page_keys": keys,
            "distinct_final_urls": finals, "statuses": statuses, "bytes": sizes}


def database_bytes(database_url: str) -> int:
    """The database's size now (before the crawl: the baseline)."""
    from sqlalchemy import text

    from storage.db import Database

    if not database_url.startswith("postgresql"):
        path = Path(database_url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    db = Database(database_url)
    try:
        with db.session() as session:
            return int(session.scalar(text("SELECT pg_database_size(current_database())")))
    finally:
        db.dispose()


def fetches(log: Path, port: int) -> dict[str, Any]:
    """nginx's requests on ``port``: in all, distinct paths, the paths asked more than once
    (at most 5, with their counts)."""
    counts: Counter[str] = Counter()
    wanted = f" {port} ".encode()
    with log.open("rb") as lines:
        for line in lines:
            if wanted in line:
                counts[line.rsplit(b" ", 1)[-1].strip().decode()] += 1
    return {"requests": sum(counts.values()), "distinct": len(counts),
            "asked_twice_or_more": {path: n for path, n in counts.most_common(5) if n > 1}}
