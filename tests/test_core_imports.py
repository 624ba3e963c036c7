"""The package boundaries, checked in a fresh interpreter (this one has every library loaded):
``core`` imports no framework, and ``storage`` builds on ``core``, never on the crawler."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What ``core`` may not load: the frameworks each process adds on top of it.
FRAMEWORKS = ("scrapy", "twisted", "flask", "werkzeug", "marshmallow", "flask_smorest",
              "sqlalchemy", "alembic", "redis", "rq", "gunicorn", "trafilatura", "extruct")

SCRIPT = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
         if ".migrations" not in info.name]
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def imported(package: str) -> tuple[list[str], set[str]]:
    """Every module of ``package`` imported in a fresh interpreter: (the modules, the
    top-level packages loaded)."""
    run = subprocess.run([sys.executable, "-c", SCRIPT, package], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=60)
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
