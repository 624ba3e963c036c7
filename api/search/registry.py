"""Which provider answers each kind of search, chosen once from the configuration.

``SEARCH_PROVIDER`` names the provider of every kind it supports; ``NEWS_SEARCH_PROVIDER`` and
``VIDEO_SEARCH_PROVIDER`` override it for news and videos. A kind without a choice (or whose
``SEARCH_PROVIDER`` cannot answer it) goes to the first configured provider, in the order of
:data:`PROVIDERS`, that supports it; none → the operation answers 503 search_not_configured.
A name that is unknown, not configured, or (as a per-kind override) cannot answer its kind is
a ConfigError (one line naming the variable) at startup.
"""

from __future__ import annotations

import logging
from typing import Any

from api.search.base import KINDS, SearchProvider, SearchQuery
from api.search.brave import BraveProvider
from api.search.google import GoogleProvider
from api.search.searxng import SearxngProvider
from api.search.youtube import YouTubeProvider
from core.config import ConfigError, SearchConfig, VideoConfig

logger = logging.getLogger(__name__)

#: Every provider, in the order the fallback tries them.
PROVIDERS: tuple[type[SearchProvider], ...] = (
    SearxngProvider, BraveProvider, GoogleProvider, YouTubeProvider,
)
#: The setting that overrides SEARCH_PROVIDER for a kind.
OVERRIDES = {"news": ("news_search_provider", "NEWS_SEARCH_PROVIDER"),
             "videos": ("video_search_provider", "VIDEO_SEARCH_PROVIDER")}


class Search:
    """The deployment's search: the provider of each kind, and YouTube engagement."""

    def __init__(self, chosen: dict[str, SearchProvider | None],
                 youtube: YouTubeProvider | None = None):
        self.chosen = chosen
        self.youtube = youtube

    @classmethod
    def from_config(cls, search: SearchConfig, video: VideoConfig) -> Search:
        """The deployment's search: the search section, and the video section for the
        platform's own search (``YOUTUBE_API_KEY``, shared with the video spider)."""
        configured: dict[str, SearchProvider] = {}
        for provider_class in PROVIDERS:
            provider = provider_class.from_config(search, video)
            if provider is not None:
                configured[provider.name] = provider
        default = _named(configured, search.search_provider, "SEARCH_PROVIDER")
        chosen = {kind: _choose(kind, configured, default, search) for kind in KINDS}
        logger.info("Search providers: %s",
                    ", ".join(f"{k}={p.name if p else 'none'}" for k, p in chosen.items()))
        youtube = configured.get(YouTubeProvider.name)
        return cls(chosen, youtube if isinstance(youtube, YouTubeProvider) else None)

    def provider_for(self, kind: str) -> SearchProvider | None:
        return self.chosen.get(kind)

    def search(self, kind: str, query: SearchQuery) -> list[dict[str, Any]]:
        """The results of ``kind``'s provider (which must exist); raises ProviderError."""
        provider = self.chosen[kind]
        if provider is None:
            raise LookupError(f"no {kind} search provider is configured")
        results = provider.search(kind, query)
        if kind == "videos" and self.youtube is not None:
            self.youtube.enrich(results)
        return results


def _choose(kind: str, configured: dict[str, SearchProvider], default: SearchProvider | None,
            search: SearchConfig) -> SearchProvider | None:
    """The provider of ``kind``: its override, else SEARCH_PROVIDER's when it can answer it,
    else the first configured that can; None when no configured provider can."""
    if kind in OVERRIDES:
        attribute, variable = OVERRIDES[kind]
        override = _named(configured, getattr(search, attribute), variable)
        if override is not None:
            if kind not in override.supports:
                raise ConfigError(f"{variable}={override.name}: {override.name} has no {kind} "
                                  f"search.")
            return override
    if default is not None and kind in default.supports:
        return default
    return next((p for p in configured.values() if kind in p.supports), None)


def _named(configured: dict[str, SearchProvider], name: str, variable: str
           ) -> SearchProvider | None:
    name = name.strip().lower()
    if not name:
        return None
    known = [p.name for p in PROVIDERS]
    if name not in known:
        raise ConfigError(f"{variable}={name}: unknown search provider; one of "
                          f"{', '.join(known)}.")
    if name not in configured:
        raise ConfigError(f"{variable}={name}: that provider is not configured (see "
                          f"docs/operators.md, Search providers).")
    return configured[name]
