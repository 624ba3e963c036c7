"""Scrapy settings for every spider, from ``scrapy crawl`` and from the warm worker alike.

Deployment knobs are *derived* from the typed configuration (``core.config``), read once
when Scrapy loads this module: its crawler, source policy, video platform and log sections.
Nothing is parsed here, so the worker, the API and ``scrapy crawl`` agree. The whole
configuration is loaded (this is ``scrapy crawl``'s entry point): a bad variable of any section
stops it with one line (``load_or_exit``). Everything else is fixed policy.
"""

from __future__ import annotations

from core.config import load_or_exit

_config = load_or_exit()
_crawler, _policy, _video = _config.crawler, _config.policy, _config.video

BOT_NAME = "webdata"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
#: The modules' spiders, and one generic spider per page operation (core.operations).
SPIDER_LOADER_CLASS = "crawler.spiders.operations.OperationSpiderLoader"

#: Where site owners can read who we are and how to reach us: in the User-Agent.
USER_AGENT = _crawler.user_agent or f"WebdataBot/0.1 (+{_crawler.contact_url})"

ROBOTSTXT_OBEY = True
#: Protego, and "disallow all" for a robots.txt the server fails to give (RFC 9309).
ROBOTSTXT_PARSER = "crawler.middlewares.RobotsParser"
#: Seconds a parsed robots.txt is reused across crawls in one worker process.
ROBOTSTXT_CACHE_TTL = _crawler.robotstxt_ttl

#: Comma-separated CIDRs of private networks the crawler may reach (empty: public only).
CRAWLER_ALLOWED_NETWORKS = _policy.allowed_networks
#: Ports fetched on public addresses (any port inside an allowed network); empty means
#: core.policy.DEFAULT_PORTS.
CRAWLER_ALLOWED_PORTS = _policy.allowed_ports
#: Comma-separated domains never fetched (subdomains included).
CRAWLER_BLOCKED_DOMAINS = _policy.blocked_domains
TWISTED_DNS_RESOLVER = "crawler.resolver.FilteringResolver"

#: Bytes; applies to the body after decompression too (gzip bombs).
DOWNLOAD_MAXSIZE = _crawler.max_bytes
DOWNLOAD_WARNSIZE = 0
#: Seconds for one whole download (connect + headers + body).
DOWNLOAD_TIMEOUT = _crawler.download_timeout
#: Seconds one single-page crawl may take in all (robots.txt, redirects, retries).
CRAWL_TIMEOUT = _crawler.crawl_timeout
#: Requests open at once to one host:port across every crawl of the process (all jobs of a
#: warm worker); CONCURRENT_REQUESTS_PER_DOMAIN only counts within one crawl.
HOST_CONCURRENCY = _crawler.host_concurrency
REDIRECT_MAX_TIMES = 10
METAREFRESH_MAXDELAY = 30
RETRY_ENABLED = False
COOKIES_ENABLED = False
HTTPCACHE_ENABLED = False
# Scrapy starts CONCURRENT_ITEMS tasks (default 100) to process each response's output, however
# little it holds: a single-page spider yields one result and there are no item pipelines, so
# 100 tasks per page were pure overhead (docs/benchmarks.md, Scrape latency).
CONCURRENT_ITEMS = 4

# Nothing but http(s), and never through a proxy taken from the environment.
DOWNLOAD_HANDLERS = {
    "http": "crawler.handlers.HTTPDownloadHandler",
    "https": "crawler.handlers.HTTPDownloadHandler",
    "file": None, "data": None, "ftp": None, "s3": None,
}
HTTPPROXY_ENABLED = False

DOWNLOADER_MIDDLEWARES = {
    # Before robots.txt, so a refused host is not even asked for its robots.txt.
    "crawler.middlewares.SourcePolicyMiddleware": 50,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.middlewares.SharedRobotsTxtMiddleware": 100,
}
EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.memusage.MemoryUsage": None,
    "scrapy.extensions.logstats.LogStats": None,
}
TELNETCONSOLE_ENABLED = False
# Scrapy 2.19 opens, per crawl, a loopback endpoint that executes Python for whoever holds
# its token: nothing a production worker should expose, and ~1 ms per crawl.
REMOTE_CONTROL_ENABLED = False
# Re-parses the spider's source on every crawl to warn about generator returns (~1 ms).
WARN_ON_GENERATOR_RETURN_VALUE = False

#: The video platform's site and Data API; settings so that tests point them at local fakes.
YOUTUBE_BASE_URL = _video.youtube_base_url
YOUTUBE_API_URL = _video.youtube_api_url
#: With a key, counts, caption status and embeddability come from the Data API's videos.list.
YOUTUBE_API_KEY = _video.youtube_api_key

TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
#: CSV rows with nested fields (a result's ``data``, ``error``) as JSON text (crawler.exporters).
FEED_EXPORTERS = {"csv": "crawler.exporters.JsonCellCsvItemExporter"}
LOG_LEVEL = _config.log.crawler_log_level
