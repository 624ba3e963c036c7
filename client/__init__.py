"""The Python client of the web-data service, and its ``webdata`` command (:mod:`client.cli`).

From batch code::

    from client import Client

    api = Client()  # WEBDATA_API_KEY, WEBDATA_API_URL (default http://127.0.0.1:8000)
    markdown = api.scrape("https://example.com/", formats=["markdown"])["markdown"]
    collection = api.collect(["https://example.com/"], extract="contacts")
    final = api.wait(collection["id"])
    api.export(collection["id"], "out.csv")

It talks to the service over HTTP only (nothing of the platform is imported), so it runs on
any machine that has ``requests`` and ``rich``.
"""

from client.errors import (
    ApiError,
    ConfigurationError,
    OutputError,
    Unreachable,
    WaitTimeout,
    WebdataError,
)
from client.http import Client
from client.progress import ProgressDisplay

__all__ = ["ApiError", "Client", "ConfigurationError", "OutputError", "ProgressDisplay",
           "Unreachable", "WaitTimeout", "WebdataError"]
