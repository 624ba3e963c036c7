"""A worker is judged dead by its pid only inside the process space (boot and PID namespace)
where that pid means the same process: elsewhere, a pid says nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from redis import Redis
from rq import Worker

from worker import liveness


def a_gone_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_a_worker_of_this_process_space_is_judged_by_its_pid(redis_url):
    redis = Redis.from_url(redis_url)
    key = f"rq:worker:liveness-{uuid.uuid4().hex}"
    gone = a_gone_pid()
    try:
        redis.hset(key, "pid", gone)
        # A worker that recorded no process space (a plain RQ worker): never judged.
        assert not liveness.is_dead(redis, key, gone)
        # Another container with the same host name, or another boot: its pids are not ours.
        redis.hset(key, liveness.FIELD, "another-boot:4026531836")
        assert not liveness.is_dead(redis, key, gone)
        liveness.record(redis, key)
        assert liveness.is_dead(redis, key, gone)
        assert not liveness.is_dead(redis, key, os.getpid())
    finally:
        redis.delete(key)


def test_warm_workers_record_their_process_space(redis_url, workers):
    redis = Redis.from_url(redis_url)
    spaces = {redis.hget(worker.key, liveness.FIELD) for worker in Worker.all(connection=redis)}
    assert spaces == {liveness.process_space().encode()}
