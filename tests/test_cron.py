"""The cron process names its jobs rather than importing them: each name is a job the
workers can import, each is enqueued by that name on our serializer, and the process itself
stays free of the database's and Scrapy's modules (issue 32: a lighter default stack)."""

from __future__ import annotations

import importlib
import subprocess
import sys

from redis import Redis

from tests.conftest import ROOT, _redis_db, make_config
from worker import queues
from worker.cron import SCHEDULE, scheduler


def test_every_scheduled_name_is_a_function_the_workers_can_import():
    for name, _ in SCHEDULE:
        module, _, attribute = name.rpartition(".")
        assert callable(getattr(importlib.import_module(module), attribute)), name


def test_each_job_is_enqueued_by_its_name_for_the_json_workers(redis_url):
    connection = Redis.from_url(_redis_db(redis_url, 8))  # no worker listens there
    cron = scheduler(make_config("sqlite://", redis_url), connection)
    enqueued = [job.enqueue(connection) for job in cron.get_jobs()]
    maintenance = queues.queue(queues.MAINTENANCE, connection)
    assert [maintenance.fetch_job(job.id).func_name for job in enqueued] == \
        [name for name, _ in SCHEDULE]
    for job in enqueued:
        job.delete()


def test_the_cron_process_imports_neither_the_database_nor_scrapy():
    code = ("import sys, worker.cron; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'sqlalchemy', 'storage', 'scrapy', 'twisted', 'collecting', 'crawler'}))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert loaded.stdout.strip() == "[]"
