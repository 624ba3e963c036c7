"""The API process stays free of the crawler's heavy libraries.

It only validates, bills and enqueues (jobs by dotted name); fetching and extraction happen on
the workers. Importing Scrapy, Twisted and the extraction libraries would cost every API
process about a second at start and their memory for nothing, and would let crawler code run
in a request thread by accident. Checked in a fresh interpreter, since this one has them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("scrapy", "twisted", "extruct", "rdflib", "trafilatura")

SCRIPT = """
import json, sys
import api
from api import create_app
from core.config import Config

app = create_app(Config.of(database_url=sys.argv[1], redis_url=sys.argv[2]))
health = app.test_client().get("/healthz").get_json()
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[3].split(",")))
print(json.dumps({"health": [health["redis"], health["database"]], "loaded": loaded}))
"""


def test_the_api_imports_none_of_the_crawler_libraries(sqlite_url, redis_url):
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, sqlite_url, redis_url, ",".join(HEAVY)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer["loaded"] == []
    assert answer["health"] == ["ok", "ok"]
