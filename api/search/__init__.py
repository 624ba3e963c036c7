"""The search proxy behind POST /search, /search/news and /search/videos.

Plain HTTP from the API process to the deployment's provider (no queue, no crawl): a
request costs the provider's time plus a few milliseconds. ``base`` holds the interface and
all shared behaviour, one module per provider says how to ask it, ``registry`` picks the
provider of each kind from the configuration.
"""

from __future__ import annotations

from api.search.base import KINDS, ProviderError, SearchProvider, SearchQuery
from api.search.registry import Search

__all__ = ["KINDS", "ProviderError", "Search", "SearchProvider", "SearchQuery"]
