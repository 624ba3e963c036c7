"""A light process tree for ``launcher.supervisor``'s stop logic, ten times in a row in
``tests/test_serve.py`` (a full ``make run`` costs ~6 s of CPU to start: Scrapy in each worker).

``python -m tests.support.supervised PORT VAR_DIR``: the same supervisor, embedded Redis and
gunicorn command as ``make run``, but gunicorn serves the tiny app below and the workers are
plain RQ workers. ``GET /job`` enqueues a one-second job and answers with its outcome, as the
API waits on its workers: a request in flight at Ctrl-C must still be answered "SUCCESSFUL".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from redis import Redis
from rq import Queue

from core.config import ROOT, ApiConfig, LaunchConfig


def app(environ, start_response):
    body = b"ok"
    if environ["PATH_INFO"] == "/job":
        queue = Queue("default", connection=Redis.from_url(os.environ["REDIS_URL"]))
        job = queue.enqueue("time.sleep", 1)
        result = job.latest_result(timeout=30)
        body = result.type.name.encode() if result else b"NO RESULT"
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [body]


def main() -> None:
    # Here, not above: gunicorn's workers import this module for ``app`` alone, and ``api``
    # is slow to import.
    from launcher.embedded import start_redis
    from launcher.serve import gunicorn_command, write_private
    from launcher.supervisor import Supervisor

    port, var_dir = int(sys.argv[1]), Path(sys.argv[2])
    launch = LaunchConfig(port=port, api_processes=2, api_threads=4)
    supervisor = Supervisor(dict(os.environ), ROOT, api_grace=40, worker_grace=40)
    supervisor.install_signal_handlers()
    clean = False
    try:
        redis, url = start_redis(var_dir)
        supervisor.adopt("redis", redis)
        supervisor.env["REDIS_URL"] = url
        write_private(var_dir / "redis-url", url)
        supervisor.spawn("api", gunicorn_command(launch, ApiConfig(job_wait_seconds=30),
                                                 "tests.support.supervised:app"))
        for number in range(2):
            supervisor.spawn(f"worker-{number}", [
                sys.executable, "-m", "rq.cli", "worker", "--url", url, "--worker-class",
                "rq.worker.SimpleWorker", "default"])
        clean = supervisor.watch()
    finally:
        supervisor.stop()
        (var_dir / "redis-url").unlink(missing_ok=True)
        print("Stopped.", file=sys.stderr, flush=True)
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
