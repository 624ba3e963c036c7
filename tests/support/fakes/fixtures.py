"""pytest fixtures of the search tests (``pytest_plugins = ["tests.support.fakes.fixtures"]``):
the four fake providers, one of each per session, and apps configured with any of them.

Search needs no crawler worker, so these apps are built from ``make_config`` directly rather
than the ``app`` fixture (which starts workers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from flask import Flask

from api import create_app
from tests.conftest import Customer, make_config, new_customer
from tests.support.fakes.search_providers import KEYS, ROUTES, FakeProvider


@pytest.fixture(scope="session")
def fakes() -> Iterator[dict[str, FakeProvider]]:
    servers = {name: FakeProvider(route).start() for name, route in ROUTES.items()}
    yield servers
    for server in servers.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def provider_settings(fakes) -> dict[str, dict[str, str]]:
    """The Config fields that configure each provider against its fake."""
    return {
        "searxng": {"searxng_url": fakes["searxng"].url},
        "brave": {"brave_api_key": KEYS["brave"], "brave_api_url": fakes["brave"].url},
        "google": {"google_cse_key": KEYS["google"], "google_cse_cx": "017576662512468239146:x",
                   "google_cse_url": fakes["google"].url},
        "youtube": {"youtube_api_key": KEYS["youtube"], "youtube_api_url": fakes["youtube"].url},
    }


@pytest.fixture(scope="session")
def search_app(sqlite_url, redis_url, provider_settings) -> Callable[..., Flask]:
    """``search_app("brave", "youtube", search_timeout=1.0)``: an app with those providers
    configured and those Config overrides; built once per distinct configuration."""
    apps: dict[tuple, Flask] = {}

    def build(*providers: str, **overrides) -> Flask:
        settings: dict = {}
        for name in providers:
            settings.update(provider_settings[name])
        settings.update(overrides)
        key = tuple(sorted(settings.items()))
        if key not in apps:
            apps[key] = create_app(make_config(sqlite_url, redis_url, **settings))
        return apps[key]

    return build


@pytest.fixture(scope="session")
def searcher(search_app) -> Callable[..., Customer]:
    """``searcher("brave", credits=100, **overrides)``: a fresh funded customer of such an app."""
    def make(*providers: str, credits: int = 100, **overrides) -> Customer:
        return new_customer(search_app(*providers, **overrides), credits=credits)

    return make
