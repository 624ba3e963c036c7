"""The package boundaries, checked in a fresh interpreter (this one has every library loaded):
``core`` imports no framework, ``storage`` builds on ``core``, never on the crawler, the
modules of ``collecting`` that the API imports load no crawler either, and the long-lived
processes that serve nobody's requests (``make run``'s supervisor, gunicorn's master) load
no framework they do not use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What ``core`` may not load: the frameworks each process adds on top of it.
FRAMEWORKS = ("scrapy", "twisted", "flask", "werkzeug", "marshmallow", "flask_smorest",
              "sqlalchemy", "alembic", "redis", "rq", "gunicorn", "trafilatura", "extruct")

#: The modules of ``collecting`` that any process may import, the API among them
#: (``collecting/__init__.py``); the others run on the warm crawler.
COLLECTING_CRAWLER_FREE = ("collecting.frontier", "collecting.frontier_lua",
                           "collecting.private_redis", "collecting.host_gate",
                           "collecting.host_share", "collecting.start", "collecting.control",
                           "collecting.python_api", "collecting.skips", "collecting.changes",
                           "collecting.monitors")
COLLECTING_ON_THE_CRAWLER = ("collecting.slice", "collecting.seeding", "collecting.repeats",
                             "collecting.landing", "collecting.page_cache")

SCRIPT = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
         if ".migrations" not in info.name]
for name in (sys.argv[2].split(",") if len(sys.argv) > 2 else names):
    importlib.import_module(name)
print(json.dumps({"modules": names, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def imported(package: str, only: tuple[str, ...] = ()) -> tuple[list[str], set[str]]:
    """Every module of ``package`` (or ``only`` those) imported in a fresh interpreter: (the
    package's modules, the top-level packages loaded)."""
    args = [sys.executable, "-c", SCRIPT, package] + ([",".join(only)] if only else [])
    run = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True, timeout=60)
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    return answer["modules"], set(answer["loaded"])


def test_the_core_imports_no_framework():
    modules, loaded = imported("core")
    assert "core.config" in modules and "core.items.page" in modules
    assert not loaded & set(FRAMEWORKS), sorted(loaded & set(FRAMEWORKS))
    assert "crawler" not in loaded and "api" not in loaded and "worker" not in loaded


def test_storage_builds_on_the_core_not_on_the_crawler():
    modules, loaded = imported("storage")
    assert "storage.ledger" in modules
    assert "core" in loaded
    assert not loaded & {"crawler", "scrapy", "twisted", "api", "worker", "flask"}, sorted(
        loaded & {"crawler", "scrapy", "twisted", "api", "worker", "flask"})


def test_the_collections_api_side_loads_no_crawler():
    """Starting and cancelling a collection (the API's part), the frontier and batch code's
    ``run_collection`` load neither Scrapy nor Twisted: only the slice and its seeding do."""
    modules, loaded = imported("collecting", COLLECTING_CRAWLER_FREE)
    assert sorted(modules) == sorted(COLLECTING_CRAWLER_FREE + COLLECTING_ON_THE_CRAWLER)
    assert not loaded & {"crawler", "scrapy", "twisted", "api", "flask"}, sorted(
        loaded & {"crawler", "scrapy", "twisted", "api", "flask"})


def test_make_runs_supervisor_holds_no_framework():
    """``make run``'s supervisor lives as long as the stack: the API, the storage and the
    crawler are its children's (``launcher.setup`` migrates and makes the demo key)."""
    _, loaded = imported("launcher", ("launcher.serve",))
    assert not loaded & set(FRAMEWORKS), sorted(loaded & set(FRAMEWORKS))
    assert not loaded & {"api", "storage", "worker", "crawler", "collecting"}


def test_gunicorns_master_holds_no_app():
    """With one API process (the default, no ``--preload``) gunicorn's master loads its
    configuration and the API's worker and logger classes, not the app: Flask, the storage and
    the rest are its worker's (the ``api`` package imports ``api.factory`` only when
    ``create_app`` is asked for)."""
    _, loaded = imported("launcher", ("launcher.gunicorn_config", "api.gunicorn_worker",
                                      "api.gunicorn_logger"))
    assert "gunicorn" in loaded
    assert not loaded & (set(FRAMEWORKS) - {"gunicorn"}), sorted(loaded & set(FRAMEWORKS))
    assert not loaded & {"storage", "worker", "crawler", "collecting"}
