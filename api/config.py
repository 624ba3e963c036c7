"""The API's configuration is the deployment's one configuration (``crawler.config``).

Re-exported here because the API reads it as ``api.config.Config``: ``create_app`` builds it with
``Config.from_env()`` (every variable validated at once), tests construct it directly.
"""

from __future__ import annotations

from crawler.config import (
    DEFAULT_DATABASE_URL,
    ROOT,
    Config,
    ConfigError,
    exit_with,
    load_or_exit,
)

__all__ = ["DEFAULT_DATABASE_URL", "ROOT", "Config", "ConfigError", "exit_with", "load_or_exit"]
