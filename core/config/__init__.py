"""The deployment's configuration: every environment variable the platform reads, in one place,
in sections.

Each variable is one field of one section (:mod:`core.config.sections`): one type, one default,
one docstring (with its unit). A section is one concern — :class:`StorageConfig`,
:class:`LaunchConfig`, :class:`LogConfig`, :class:`ApiConfig`, :class:`WorkerConfig`,
:class:`CollectionsConfig`, :class:`PolicyConfig`, :class:`CrawlerConfig`,
:class:`VideoConfig`, :class:`SearchConfig` — and a component takes the sections it reads,
not the whole: the crawler's settings are built from the crawler, policy, video and log
sections, the search registry from the search and video ones, a database from storage's. A
variable read by several components (the source policy: the API's pre-check, the crawler's
resolver and the webhooks; ``YOUTUBE_API_*``: the video spider and the video search;
``REDIS_URL``: everyone) is still one field of one section, hence one default.

:class:`Config` is their composition (``config.storage.redis_url``, ``config.crawler.
max_bytes``…). Every entry point — ``make run``, ``python -m worker``, the API factory,
``scrapy crawl``, the migrations — loads the whole of it once (:func:`load_or_exit`) and hands
the sections down. Why the whole, when each process reads only some sections: a deployment
shares one environment, so a bad value anywhere is a broken deployment; stopping every process
at start-up with the one line naming it is better than a worker that starts fine and an API
that does not, or a variable silently ignored by the process that does not read it. Each
section can also be read on its own (``CrawlerConfig.from_env()``), by the same one function
over its fields (:func:`core.config.section.parse`): for a job that needs only the storage.

Why in ``core``: ``core`` is the package at the bottom that every process already imports, and
this package imports only the standard library, so ``import core.config`` costs nothing and
pulls in neither Flask nor Scrapy: the crawler's settings (``crawler/settings.py``) are
*derived* from it, and the API reads it without loading Scrapy.

The empty-value rule: an empty value is the same as an unset one for *text* (URLs, keys, names,
lists, paths), so ``CRAWLER_ALLOWED_NETWORKS=`` means "none" and ``FOO=`` in a shell clears a
setting. For *numbers and log levels* an empty value is an error: ``CRAWLER_MAX_BYTES=`` is far
more likely a broken template than a wish for the default, and guessing would hide it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NoReturn

from core.config.section import ConfigError, Section, var, variable_fields
from core.config.sections import (
    DEFAULT_DATABASE_URL,
    DEFAULT_REDIS_URL,
    DEFAULT_VAR_DIR,
    REDIS_URL_FILE,
    ROOT,
    ApiConfig,
    CacheConfig,
    CollectionsConfig,
    CrawlerConfig,
    LaunchConfig,
    LogConfig,
    PolicyConfig,
    SearchConfig,
    StorageConfig,
    VideoConfig,
    WorkerConfig,
)

__all__ = [
    "DEFAULT_DATABASE_URL", "DEFAULT_REDIS_URL", "DEFAULT_VAR_DIR", "EXIT_STATUS",
    "REDIS_URL_FILE", "ROOT", "ApiConfig", "CacheConfig", "CollectionsConfig", "Config",
    "ConfigError", "CrawlerConfig", "LaunchConfig", "LogConfig", "PolicyConfig", "SearchConfig",
    "Section", "StorageConfig", "VideoConfig", "WorkerConfig", "exit_with", "load_or_exit",
    "sections", "var", "variables",
]


@dataclass(frozen=True)
class Config:
    """Every setting of a deployment, by section. Build it with :meth:`from_env`; tests build
    it with :meth:`of`. Each field's default factory is its section's class."""

    storage: StorageConfig = field(default_factory=StorageConfig)
    launch: LaunchConfig = field(default_factory=LaunchConfig)
    log: LogConfig = field(default_factory=LogConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    collections: CollectionsConfig = field(default_factory=CollectionsConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    crawler: CrawlerConfig = field(default_factory=CrawlerConfig)
    video: VideoConfig = field(default_factory=VideoConfig)
    search: SearchConfig = field(default_factory=SearchConfig)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """Every section of ``environ`` (default ``os.environ``), parsed and validated.

        Raises :class:`ConfigError` for the first bad value, in section then field order.
        """
        environ = os.environ if environ is None else environ
        return cls(**{name: section.from_env(environ) for name, section in sections().items()})

    @classmethod
    def of(cls, **values: Any) -> Config:
        """The defaults but for ``values``, given by field name whatever their section
        (``Config.of(port=8001, max_bytes=2048)``); TypeError for a name no section has."""
        return cls().replace(**values)

    def replace(self, **values: Any) -> Config:
        """This configuration but for ``values``, given by field name as in :meth:`of`."""
        changed: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            if name not in _SECTION_OF:
                raise TypeError(f"Config has no field {name!r}")
            changed.setdefault(_SECTION_OF[name], {})[name] = value
        return dataclasses.replace(self, **{
            section: dataclasses.replace(getattr(self, section), **section_values)
            for section, section_values in changed.items()})


def sections() -> dict[str, type[Section]]:
    """Every section: its attribute on :class:`Config` → its class, in order."""
    return {spec.name: spec.default_factory for spec in fields(Config)}


def _section_of_each_field() -> dict[str, str]:
    """Field name → the name of its section; a name in two sections is refused at import
    (:meth:`Config.of` could not tell where it goes)."""
    owner: dict[str, str] = {}
    for section_name, section in sections().items():
        for spec in fields(section):
            if spec.name in owner:
                raise TypeError(f"{spec.name!r} is a field of both {owner[spec.name]} and "
                                f"{section_name}")
            owner[spec.name] = section_name
    return owner


_SECTION_OF = _section_of_each_field()


def variables(section: str | None = None) -> dict[str, tuple[str, Any, str]]:
    """Every environment variable (or only ``section``'s): name → (field name, default, type
    name), section by section in :class:`Config`'s order, each in field order."""
    every = sections()
    chosen = every.values() if section is None else [every[section]]
    return {spec.metadata["env"]: (spec.name, spec.default, spec.metadata["kind"].type_name)
            for section_class in chosen for spec in variable_fields(section_class)}


#: Exit status of a process stopped by a bad variable. 4 is also gunicorn's "the app failed to
#: load": a gunicorn serving ``api:create_app()`` then stops, instead of starting new workers
#: that fail the same way forever (what any other status makes it do).
EXIT_STATUS = 4


def load_or_exit(environ: Mapping[str, str] | None = None) -> Config:
    """The whole configuration, or exit (:data:`EXIT_STATUS`) with one line on stderr: for the
    entry points of processes (``make run``, ``python -m worker``, the API factory, ``scrapy
    crawl``), where a traceback would only bury the one line that matters."""
    try:
        return Config.from_env(environ)
    except ConfigError as exc:
        exit_with(exc)


def exit_with(error: ConfigError) -> NoReturn:
    """Stop the process with the one line that names the bad variable (and no traceback)."""
    print(f"Configuration error: {error}", file=sys.stderr, flush=True)
    raise SystemExit(EXIT_STATUS) from None
