"""What we read and write of RQ's state (worker.rq_state): the names it relies on are RQ's, and a
worker is judged dead by its pid only inside the process space (boot and PID namespace) where
that pid means the same process: elsewhere, a pid says nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from redis import Redis
from rq import Queue, Worker
from rq.job import Job

from worker import liveness, rq_state


def a_gone_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_a_worker_of_this_process_space_is_judged_by_its_pid(redis_url):
    redis = Redis.from_url(redis_url)
    key = rq_state.worker_key(f"liveness-{uuid.uuid4().hex}")
    gone = a_gone_pid()
    try:
        assert rq_state.is_dead(redis, key)  # no hash at all
        redis.hset(key, "pid", gone)
        # A worker that recorded no process space (a plain RQ worker): never judged.
        assert not rq_state.is_dead(redis, key) and rq_state.alive(redis, [key]) == {key}
        # Another container with the same host name, or another boot: its pids are not ours.
        redis.hset(key, rq_state.SPACE_FIELD, "another-boot:4026531836")
        assert not rq_state.is_dead(redis, key)
        rq_state.record_space(redis, key)
        assert rq_state.is_dead(redis, key) and rq_state.alive(redis, [key]) == set()
        redis.hset(key, "pid", os.getpid())
        assert not rq_state.is_dead(redis, key)
    finally:
        redis.delete(key)


def test_warm_workers_record_their_process_space(redis_url, workers):
    redis = Redis.from_url(redis_url)
    spaces = {redis.hget(worker.key, rq_state.SPACE_FIELD)
              for worker in Worker.all(connection=redis)}
    assert spaces == {liveness.process_space().encode()}
    registered = rq_state.queue_workers(redis, ["interactive"])["interactive"]
    assert registered == {worker.key for worker in Worker.all(connection=redis)}


def test_the_names_are_rqs(redis_url):
    """RQ's own objects agree with what rq_state reads behind their back."""
    redis = Redis.from_url(redis_url)
    queue = Queue(f"names-{uuid.uuid4().hex}", connection=redis)
    job = queue.enqueue("time.time")
    try:
        assert rq_state.job_state(redis, job.key) == ("queued", "")
        fetched = Job.fetch(job.id, connection=redis)
        assert fetched.get_status() == "queued" and fetched.worker_name is None
        assert rq_state.worker_key("w") == Worker("q", name="w", connection=redis).key
        assert rq_state.result_stream_key(job.id).endswith(job.id)
    finally:
        job.delete()
