"""The one configuration (``core.config``): every variable validated at start-up, in every
entry point alike, and the table of docs/operators.md listing exactly the variables it reads."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from core.config import (
    EXIT_STATUS,
    ApiConfig,
    Config,
    ConfigError,
    CrawlerConfig,
    LaunchConfig,
    LogConfig,
    StorageConfig,
    sections,
    variables,
)
from storage.db import make_engine
from tests.conftest import ROOT
from tests.support.docs import section

#: (variable, bad value, what the one line must say besides the variable's name).
BAD_VALUES = [
    ("CRAWLER_MAX_BYTES", "", "is empty: expected a whole number of bytes"),
    ("CRAWLER_MAX_BYTES", "10MB", "expected a whole number of bytes"),
    ("CRAWLER_MAX_BYTES", "0", "at least 1"),
    ("WORKERS", "abc", "expected a whole number of worker processes"),
    ("WORKERS", "-1", "0 or more"),
    ("PORT", "70000", "1-65535"),
    ("API_THREADS", " ", "is empty"),
    ("JOB_WAIT_SECONDS", "1.5", "whole number of seconds"),
    ("INTERACTIVE_JOB_TIMEOUT", "", "is empty"),
    ("CRAWLER_ALLOWED_NETWORKS", "300.0.0.0/8", "'300.0.0.0/8' is not a network"),
    ("CRAWLER_ALLOWED_NETWORKS", "127.0.0.0/8,localhost", "'localhost' is not a network"),
    ("CRAWLER_ALLOWED_PORTS", "80,http", "'http' is not a port"),
    ("CRAWLER_ALLOWED_PORTS", "0", "'0' is not a port"),
    ("CRAWLER_BLOCKED_DOMAINS", "https://example.com/", "is not a domain name"),
    ("CRAWLER_DOWNLOAD_TIMEOUT", "-5", "seconds greater than 0"),
    ("CRAWLER_CRAWL_TIMEOUT", "0", "seconds greater than 0"),
    ("CRAWLER_CRAWL_TIMEOUT", "nan", "seconds greater than 0"),
    ("CRAWLER_ROBOTSTXT_TTL", "-1", "0 or more"),
    ("SEARCH_TIMEOUT", "", "is empty"),
    ("CRAWLER_LOG_LEVEL", "LOUD", "a log level (DEBUG, INFO, WARNING, ERROR, CRITICAL)"),
    ("LOG_LEVEL", "", "is empty"),
    ("SEARCH_PROVIDER", "bing", "one of searxng, brave, google, youtube"),
    ("SEARXNG_URL", "searx.local", "an http(s) URL"),
    ("CRAWLER_CONTACT_URL", "mailto:ops@example.com", "an http(s) URL"),
    ("REDIS_URL", "127.0.0.1:6379", "a Redis URL"),
    ("DATABASE_URL", "webdata.db", "a database URL"),
    ("DATABASE_URL", "postgresql+psycopg://db/x", "postgresql+psycopg2://…) are supported"),
    ("DATABASE_URL", "mysql://db/x", "only sqlite:///…, postgresql://… (or postgres://…"),
]


def clean_env(tmp_path: Path, **values: str) -> dict[str, str]:
    """This process's environment without any configuration variable, plus ``values``; local
    state in ``tmp_path`` so that a running ``make run`` cannot leak in."""
    env = {k: v for k, v in os.environ.items() if k not in variables()}
    return {**env, "VAR_DIR": str(tmp_path), **values}


@pytest.mark.parametrize(("name", "value", "message"), BAD_VALUES)
def test_a_bad_value_is_one_line_naming_the_variable(tmp_path, name, value, message):
    with pytest.raises(ConfigError) as raised:
        Config.from_env(clean_env(tmp_path, **{name: value}))
    line = str(raised.value)
    assert line.startswith(f"{name} is empty" if not value.strip() else f"{name}={value!r}")
    assert message in line
    assert "\n" not in line


#: (variable, bad value holding the credential "s3cret", what the line shows instead).
SECRET_VALUES = [
    ("DATABASE_URL", "postgresql+asyncpg://user:s3cret@db/x",
     "DATABASE_URL='postgresql+asyncpg://user:***@db/x'"),
    ("DATABASE_URL", "mysql://user:s3/cret@db/x", "DATABASE_URL='mysql://user:***@db/x'"),
    ("REDIS_URL", "http://:s3cret@cache:6379/0", "REDIS_URL='http://:***@cache:6379/0'"),
    ("SEARXNG_URL", "ftp://admin:s3cret@searx.local/", "SEARXNG_URL='ftp://admin:***@searx"),
    ("REDIS_URL", "redis:/c?password=s3cret&db=1", "REDIS_URL='redis:/c?password=***&db=1'"),
    ("BRAVE_API_KEY", "s3cret\x00", "BRAVE_API_KEY is not valid"),
    ("GOOGLE_CSE_KEY", "s3\ncret", "GOOGLE_CSE_KEY is not valid"),
    ("YOUTUBE_API_KEY", "s3cret\x7f", "YOUTUBE_API_KEY is not valid"),
]


@pytest.mark.parametrize(("name", "value", "shown"), SECRET_VALUES)
def test_a_bad_value_never_shows_a_credential(tmp_path, name, value, shown):
    """Error lines land on stderr, in logs and CI output: a URL keeps its user name and loses
    its password, a key is named but never echoed."""
    with pytest.raises(ConfigError) as raised:
        Config.from_env(clean_env(tmp_path, **{name: value}))
    line = str(raised.value)
    assert line.startswith(shown)
    assert "s3" not in line and "cret" not in line


def test_defaults_and_the_empty_value_rule(tmp_path):
    config = Config.from_env(clean_env(tmp_path))
    assert config == Config.of(database_url=f"sqlite:///{tmp_path / 'webdata.db'}",
                               var_dir=tmp_path)
    assert config.log.crawler_log_level == "WARNING" and config.log.log_level == "INFO"
    # Empty text is unset: the default (also for a text variable whose default is not empty).
    empty = Config.from_env(clean_env(tmp_path, CRAWLER_ALLOWED_NETWORKS="", SEARCH_PROVIDER="",
                                      CRAWLER_CONTACT_URL="", REDIS_URL=""))
    assert empty.policy.allowed_networks == "" and empty.search.search_provider == ""
    assert empty.crawler.contact_url == CrawlerConfig.contact_url
    assert empty.storage.redis_url == StorageConfig.redis_url
    assert empty.storage.redis_url_origin == "default"


def test_values_are_typed_and_normalised(tmp_path):
    config = Config.from_env(clean_env(
        tmp_path, CRAWLER_MAX_BYTES="2048", CRAWLER_DOWNLOAD_TIMEOUT="2.5", WORKERS="0",
        CRAWLER_LOG_LEVEL="debug", CRAWLER_ALLOWED_NETWORKS=" 127.0.0.0/8 , ::1/128 ",
        CRAWLER_BLOCKED_DOMAINS="Tracker.Example., ads.example", SEARCH_PROVIDER="Brave",
        REDIS_URL="redis://127.0.0.1:6390/3"))
    assert config.crawler.max_bytes == 2048 and config.crawler.download_timeout == 2.5
    assert config.launch.workers == 0
    assert config.log.crawler_log_level == "DEBUG"
    assert config.policy.allowed_networks == "127.0.0.0/8,::1/128"
    assert config.policy.blocked_domains == "tracker.example,ads.example"
    assert config.search.search_provider == "brave"
    assert (config.storage.redis_url, config.storage.redis_url_origin) == (
        "redis://127.0.0.1:6390/3", "environment")


@pytest.mark.parametrize("written", ["postgresql://u@db:5432/x", "postgres://u@db:5432/x",
                                     "POSTGRES://u@db:5432/x", "postgresql+psycopg2://u@db:5432/x"])
def test_a_postgresql_url_as_users_write_it_means_psycopg2(tmp_path, written):
    """SQLAlchemy 2.1 reads ``postgresql://`` as psycopg 3 (not installed: a traceback from
    the migrations) and refuses ``postgres://`` (what Heroku-style platforms hand out)."""
    config = Config.from_env(clean_env(tmp_path, DATABASE_URL=written))
    assert config.storage.database_url == "postgresql+psycopg2://u@db:5432/x"
    assert make_engine(written).dialect.driver == "psycopg2"  # the engine of batch code too


def test_the_embedded_redis_url_file_is_found_unless_redis_url_is_set(tmp_path):
    (tmp_path / "redis-url").write_text("redis://127.0.0.1:6391/0\n")
    found = Config.from_env(clean_env(tmp_path))
    assert (found.storage.redis_url, found.storage.redis_url_origin) == (
        "redis://127.0.0.1:6391/0", "file")
    assert Config.from_env(clean_env(tmp_path, REDIS_URL="redis://h:1/0")).storage.redis_url \
        == "redis://h:1/0"


def test_a_section_reads_its_own_variables_by_the_same_rules(tmp_path):
    """``CrawlerConfig.from_env`` is the crawler section ``Config.from_env`` builds, and a bad
    variable of another section is not its business; storage keeps its derived defaults."""
    env = clean_env(tmp_path, CRAWLER_MAX_BYTES="2048", CRAWLER_USER_AGENT="Bot/1")
    assert CrawlerConfig.from_env(env) == Config.from_env(env).crawler
    assert CrawlerConfig.from_env({**env, "WORKERS": "abc"}).max_bytes == 2048
    with pytest.raises(ConfigError, match=r"^CRAWLER_MAX_BYTES is empty"):
        CrawlerConfig.from_env({**env, "CRAWLER_MAX_BYTES": ""})
    (tmp_path / "redis-url").write_text("redis://127.0.0.1:6391/0\n")
    storage = StorageConfig.from_env(env)
    assert storage == Config.from_env(env).storage
    assert storage.database_url == f"sqlite:///{tmp_path / 'webdata.db'}"
    assert (storage.redis_url, storage.redis_url_origin) == ("redis://127.0.0.1:6391/0", "file")


def test_config_of_routes_each_flat_name_to_its_section():
    config = Config.of(port=8001, max_bytes=2048, redis_url="redis://h:1/0")
    assert (config.launch.port, config.crawler.max_bytes) == (8001, 2048)
    assert config.storage.redis_url == "redis://h:1/0"
    assert config.launch.workers == 2 and config.api == Config().api  # the rest: defaults
    changed = config.replace(workers=0)
    assert (changed.launch.workers, changed.launch.port, config.launch.workers) == (0, 8001, 2)
    with pytest.raises(TypeError, match="'max_byte'"):
        Config.of(max_byte=1)


def test_every_variable_is_one_field_of_one_section():
    """Field names are unique across sections (``Config.of`` routes by them), and the
    variables are the sections' variables, section by section."""
    names = [spec.name for section in sections().values() for spec in fields(section)]
    assert len(names) == len(set(names))
    by_section = [variables(name) for name in sections()]
    assert sum(len(section) for section in by_section) == len(variables())
    assert [name for section in by_section for name in section] == list(variables())
    assert set(variables("policy")) == {"CRAWLER_ALLOWED_NETWORKS", "CRAWLER_ALLOWED_PORTS",
                                        "CRAWLER_BLOCKED_DOMAINS"}


#: Each process's entry point.
ENTRY_POINTS = {
    "worker": [sys.executable, "-m", "worker", "--burst"],
    "scrapy crawl": [sys.executable, "-m", "scrapy", "crawl", "page", "-a",
                     "url=http://127.0.0.2/", "-O", "-:jsonl"],
    "api factory": [sys.executable, "-m", "flask", "--app", "api", "routes"],
    "make run": [sys.executable, "-m", "launcher"],
}


@pytest.mark.stack  # a process of each entry point
@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(("name", "value", "message"), [
    ("CRAWLER_MAX_BYTES", "", "is empty: expected a whole number of bytes"),
    ("CRAWLER_ALLOWED_NETWORKS", "300.0.0.0/8", "'300.0.0.0/8' is not a network"),
])
def test_every_entry_point_stops_with_the_one_line(tmp_path, entry, name, value, message):
    done = subprocess.run(ENTRY_POINTS[entry], cwd=ROOT, env=clean_env(tmp_path, **{name: value}),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_STATUS, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"Configuration error: {name}")
    assert message in lines[0]
    assert not list(tmp_path.iterdir())  # make run stopped before starting anything


@pytest.mark.stack  # a process of each entry point
@pytest.mark.parametrize(("name", "value", "message"), [
    ("SEARCH_PROVIDER", "brave", "SEARCH_PROVIDER=brave: that provider is not configured"),
    ("NEWS_SEARCH_PROVIDER", "google", "has no news search"),
])
def test_a_search_provider_that_cannot_answer_stops_the_api(tmp_path, name, value, message):
    """Which providers are configured (and what each can do) is only known once they are
    built; the API factory still stops with the one line."""
    env = clean_env(tmp_path, **{name: value, "GOOGLE_CSE_KEY": "k", "GOOGLE_CSE_CX": "cx"})
    done = subprocess.run(ENTRY_POINTS["api factory"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == EXIT_STATUS, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"Configuration error: {name}=")
    assert message in lines[0]


@pytest.mark.stack  # a process of each entry point
def test_gunicorn_serving_the_api_stops_too(tmp_path):
    """Not a restart loop of workers that each fail the same way: gunicorn gives up."""
    from launcher.embedded import free_port
    from launcher.serve import gunicorn_command

    command = gunicorn_command(LaunchConfig(port=free_port(), api_processes=1), ApiConfig())
    done = subprocess.run(command, cwd=ROOT, env=clean_env(tmp_path, WORKERS="abc"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_STATUS, done.stderr
    assert "Configuration error: WORKERS='abc' is not valid" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.stack  # a process of each entry point
def test_scrapy_settings_are_derived_from_the_configuration(tmp_path):
    env = clean_env(tmp_path, CRAWLER_MAX_BYTES="4096", CRAWLER_ALLOWED_NETWORKS="10.0.0.0/8")
    def get(setting: str) -> str:
        return subprocess.run([sys.executable, "-m", "scrapy", "settings", "--get", setting],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=True,
                              timeout=60).stdout.strip()

    assert get("DOWNLOAD_MAXSIZE") == "4096"
    assert get("CRAWLER_ALLOWED_NETWORKS") == "10.0.0.0/8"
    assert get("LOG_LEVEL") == LogConfig.crawler_log_level


def test_every_setting_is_scrapys_or_read_by_our_code():
    """A setting Scrapy no longer has does nothing, silently (REQUEST_FINGERPRINTER_IMPLEMENTATION
    was removed by Scrapy 2.14): each name in crawler/settings.py is one of Scrapy's defaults
    or one our crawler code reads."""
    from scrapy.settings import default_settings

    source = (ROOT / "crawler" / "settings.py").read_text()
    ours = "\n".join(path.read_text() for path in (ROOT / "crawler").rglob("*.py")
                     if path.name != "settings.py")
    dead = [name for name in re.findall(r"^([A-Z][A-Z0-9_]*) =", source, re.MULTILINE)
            if not hasattr(default_settings, name) and name not in ours]
    assert not dead


def documented_configuration_rows() -> dict[str, list[str]]:
    """The Configuration table of docs/operators.md: variable → its cells (type, default,
    meaning)."""
    rows = {}
    for line in section("docs/operators.md", "Configuration").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"`([A-Z_]+)`", cells[0]) if line.startswith("|") else None
        if match:
            rows[match.group(1)] = cells[1:]
    return rows


def test_the_documented_table_lists_every_variable_with_its_type_and_default():
    rows = documented_configuration_rows()
    assert sorted(rows) == sorted(variables())
    for name, (_field, default, type_name) in variables().items():
        kind, shown_default = rows[name][0], rows[name][1]
        assert kind == type_name, name
        if isinstance(default, int | float) and not isinstance(default, bool):
            shown = str(default) if isinstance(default, int) else f"{default:g}"
            assert shown_default == f"`{shown}`", name
        elif isinstance(default, str) and default and "/var/" not in default:
            assert f"`{default}`" in shown_default, name


def test_the_documented_tables_are_the_sections():
    """One table per section under a heading naming it (``### <title>: `config.<name>```), in
    :class:`Config`'s order, each listing its section's variables in field order."""
    tables: dict[str, list[str]] = {}
    rows: list[str] = []
    for line in section("docs/operators.md", "Configuration").splitlines():
        if line.startswith("### "):
            rows = tables.setdefault(line.removeprefix("### "), [])
        elif match := re.match(r"\| `([A-Z_]+)` \|", line):
            assert tables, f"{match.group(1)} is in no section's table"
            rows.append(match.group(1))
    assert list(tables.items()) == [(f"{kind.title}: `config.{name}`", list(variables(name)))
                                    for name, kind in sections().items()]
