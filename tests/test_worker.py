"""The warm worker: jobs straight through RQ, a job timeout, robots.txt reuse, the order of
its queues."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

from redis import Redis
from rq.callbacks import Callback
from rq.job import JobStatus
from rq.results import Result
from rq.suspension import resume, suspend
from rq.worker import Worker

from api.errors import ApiError
from crawler.middlewares import RobotsCache
from tests.conftest import ROOT, WORKER_ENV, _redis_db
from tests.support.fakes.spiders import BuggyPageSpider
from tests.support.waits import wait_until
from worker import jobs, queues, replies


def _queue(redis_url):
    return queues.queue(queues.INTERACTIVE, Redis.from_url(redis_url))


def test_jobs_can_be_enqueued_by_batch_code(redis_url, workers, site):
    job = _queue(redis_url).enqueue(jobs.scrape, f"{site}/article", include_links=False)
    page = job.latest_result(timeout=30).return_value
    assert page["status"] == "succeeded"
    assert page["error"] is None
    assert page["data"]["title"] == "Tide tables of the Thames estuary"
    assert page["data"]["links"] == []


def test_a_job_asking_for_it_gets_its_value_sent_early_and_rqs_result_as_well(
        redis_url, workers, site):
    """What the API waits on (worker.replies): the same value, written before RQ's result,
    kept briefly; RQ's result is unchanged, and jobs that don't ask get no reply."""
    redis = Redis.from_url(redis_url)
    queue = _queue(redis_url)
    asked = queue.enqueue(jobs.scrape, f"{site}/article", meta={replies.WANTED: True})
    plain = queue.enqueue(jobs.scrape, f"{site}/article")
    result = asked.latest_result(timeout=30)
    assert plain.latest_result(timeout=30).type == Result.Type.SUCCESSFUL
    (reply_id, fields), = redis.xrange(replies.key(asked.id))
    assert replies.value(fields) == result.return_value
    assert result.return_value["data"]["title"] == "Tide tables of the Thames estuary"
    (result_id, _), = redis.xrange(Result.get_key(asked.id))
    assert reply_id <= result_id  # stream ids grow: the reply came first
    assert 0 < redis.ttl(replies.key(asked.id)) <= replies.TTL
    assert not redis.exists(replies.key(plain.id))


def test_an_early_reply_gives_back_the_slot_it_names(redis_url, workers, site):
    """The API's request names its slot of its account (``api.inflight``): the reply removes
    it in the same round trip, and nothing else of the set."""
    redis = Redis.from_url(redis_url)
    slots = f"webdata:inflight:test-{uuid.uuid4().hex}"
    redis.zadd(slots, {"req_this": 1, "req_other": 1})
    job = _queue(redis_url).enqueue(
        jobs.scrape, f"{site}/article",
        meta={replies.WANTED: True, replies.GIVES_BACK: [slots, "req_this"]})
    assert job.latest_result(timeout=30).type == Result.Type.SUCCESSFUL
    assert redis.exists(replies.key(job.id))
    assert redis.zrange(slots, 0, -1) == [b"req_other"]
    redis.delete(slots)


def test_a_job_of_the_earlier_api_gets_its_early_reply_too(redis_url, workers, site):
    """Before 2026-11-26 the API asked for the reply with RQ's success callback
    (``worker.replies.send``, called ``(job, connection, result)``): such a job, waiting
    while the workers are upgraded, still succeeds and replies."""
    redis = Redis.from_url(redis_url)
    job = _queue(redis_url).enqueue(jobs.scrape, f"{site}/article",
                                    on_success=Callback(replies.send))
    result = job.latest_result(timeout=30)
    assert result.type == Result.Type.SUCCESSFUL
    (_, fields), = redis.xrange(replies.key(job.id))
    assert replies.value(fields) == result.return_value


def test_a_failed_job_sends_no_early_reply(redis_url, workers, site):
    """A job RQ fails (here, over its timeout) is told through RQ's result only."""
    redis = Redis.from_url(redis_url)
    job = _queue(redis_url).enqueue(jobs.scrape, f"{site}/drip", job_timeout=1,
                                    meta={replies.WANTED: True})
    assert job.latest_result(timeout=30).type == Result.Type.FAILED
    assert not redis.exists(replies.key(job.id))


def test_a_bug_in_extraction_is_a_failed_result_not_a_blank_success(redis_url, workers, site):
    spider = f"{BuggyPageSpider.__module__}.{BuggyPageSpider.__name__}"
    job = _queue(redis_url).enqueue(jobs.run_single_page, spider, f"{site}/article")
    page = job.latest_result(timeout=30).return_value
    assert (page["status"], page["data"]) == ("failed", None)
    assert page["error"]["error"] == "internal_error"
    assert page["final_url"] == f"{site}/article"
    assert ApiError.from_result(page["error"]).status == 500  # the API answers 500, free


def test_job_timeout_stops_the_crawl_and_the_worker_survives(redis_url, workers, site):
    queue = _queue(redis_url)
    slow = queue.enqueue(jobs.scrape, f"{site}/drip", job_timeout=1)
    result = slow.latest_result(timeout=30)
    assert result.type == result.Type.FAILED
    assert "JobTimeoutException" in result.exc_string
    # Both workers still answer, and are not stuck on the stopped crawl.
    for _ in range(4):
        page = queue.enqueue(jobs.scrape, f"{site}/article").latest_result(timeout=30)
        assert page.return_value["status"] == "succeeded"
    assert all(proc.poll() is None for proc in workers)


def test_robots_txt_is_reused_across_crawls(redis_url, workers, site, site_server):
    queue = _queue(redis_url)
    before = site_server.requests["/robots.txt"]
    for _ in range(10):
        page = queue.enqueue(jobs.scrape, f"{site}/article").latest_result(timeout=30)
        assert page.return_value["status"] == "succeeded"
    # Without the shared cache every crawl would ask again (10); with it, at most once per
    # worker process that had not seen this site yet.
    assert site_server.requests["/robots.txt"] - before <= len(workers)


def test_the_robots_cache_is_bounded_and_forgets_the_least_recently_used():
    cache = RobotsCache(size=3)
    for site in ("a", "b", "c"):
        cache.put(site, f"parser {site}", ttl=600)
    assert cache.get("a") == "parser a"  # "a" is now the most recently used
    cache.put("d", "parser d", ttl=600)
    assert len(cache) == 3
    assert [cache.get(site) for site in "abcd"] == ["parser a", None, "parser c", "parser d"]
    cache.put("e", "parser e", ttl=0)  # expired at once
    assert cache.get("e") is None


def test_a_worker_takes_the_sweep_before_waiting_interactive_work(redis_url):
    """The sweep is enqueued with ``ttl=SWEEP_INTERVAL``: if interactive work came first, an
    ``interactive`` queue that stays busy for an interval would let every sweep expire unrun."""
    url = _redis_db(redis_url, 7)
    connection = Redis.from_url(url)
    connection.flushdb()
    interactive = queues.queue(queues.INTERACTIVE, connection).enqueue("time.time")
    sweep = queues.queue(queues.MAINTENANCE, connection).enqueue("time.time")
    subprocess.run([sys.executable, "-m", "worker", "--burst"], cwd=ROOT, check=True,
                   env={**os.environ, **WORKER_ENV, "REDIS_URL": url}, timeout=120)
    interactive.refresh()
    sweep.refresh()
    assert sweep.is_finished and interactive.is_finished
    # Taken first: its execution was created first, by the one thread that takes jobs (the
    # worker then runs both at once: the sweep need not end first).
    assert sweep.latest_result().execution_started_at <= \
        interactive.latest_result().execution_started_at


def test_a_suspended_worker_takes_no_job_until_resumed(redis_url):
    """``rq suspend`` is honoured by the warm worker (which looks at most every second, and
    before its first job): a burst worker started while suspended leaves the job queued."""
    # Database 7 is the sweep test's too: each flushes it first and leaves nothing running
    # (test_worker_concurrency owns 11 to 15).
    url = _redis_db(redis_url, 7)
    connection = Redis.from_url(url)
    connection.flushdb()
    job = queues.queue(queues.INTERACTIVE, connection).enqueue("time.time")
    burst = [sys.executable, "-m", "worker", "--burst", queues.INTERACTIVE]
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": url}
    suspend(connection)
    subprocess.run(burst, cwd=ROOT, check=True, env=env, timeout=120)
    assert job.get_status(refresh=True) == JobStatus.QUEUED
    resume(connection)
    subprocess.run(burst, cwd=ROOT, check=True, env=env, timeout=120)
    assert job.get_status(refresh=True) == JobStatus.FINISHED


def test_a_running_worker_stops_taking_jobs_once_suspended(redis_url):
    """``rq suspend`` reaches a worker already waiting for work (RQ looks only between the
    jobs it takes, so one more job was taken however long the suspension had lasted): it
    shows itself suspended, takes nothing, and takes the job once resumed."""
    url = _redis_db(redis_url, 7)
    connection = Redis.from_url(url)
    connection.flushdb()
    env = {**os.environ, **WORKER_ENV, "REDIS_URL": url}
    proc = subprocess.Popen([sys.executable, "-m", "worker", queues.INTERACTIVE], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: Worker.all(connection=connection), "the worker", 120, proc=proc)
        suspend(connection)
        wait_until(lambda: [w.get_state() for w in Worker.all(connection=connection)]
                   == ["suspended"], "the worker to show it is suspended", proc=proc)
        job = queues.queue(queues.INTERACTIVE, connection).enqueue("time.time")
        time.sleep(3)  # a worker still taking jobs would have run it by now
        assert job.get_status(refresh=True) == JobStatus.QUEUED
        resume(connection)
        wait_until(lambda: job.get_status(refresh=True) == JobStatus.FINISHED, "the job",
                   proc=proc)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
