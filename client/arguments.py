"""The ``webdata`` command line: its commands and their options (argparse), and the reading
of ``--format``, which names a page's content formats and a file's format alike.

Each command's ``run`` function is :mod:`client.cli`'s, looked up by the command's name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from client.bodies import MAP_OPTIONS
from client.http import CHANGE_STATUSES, CONTENT_FORMATS, FORMATS, SKIP_REASONS

EXTRACTS = ("page", "contacts", "products", "schema")

#: What ``--format`` of ``collect`` and ``crawl`` takes: a page's content formats and a
#: file's (the two sets are disjoint).
COLLECTION_FORMATS = (*CONTENT_FORMATS, *FORMATS)
_PAGE_ONLY = "(extract page)"


class FormatAction(argparse.Action):
    """``--format``, repeatable: a content format joins ``formats`` (each once, None: the
    service's default, text); a file format (``collect``, ``crawl``) is ``file_format``, one
    at most."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 value: object, option_string: str | None = None) -> None:
        if value in CONTENT_FORMATS:
            asked = namespace.formats or []
            namespace.formats = asked if value in asked else [*asked, value]
        elif getattr(namespace, "file_format", None) not in (None, value):
            parser.error(f"one file format at most: --format {namespace.file_format} or "
                         f"--format {value}?")
        else:
            namespace.file_format = value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="webdata", description="Scrape a page, run collections on the web-data service "
        "(batches of URLs and crawls, with a live progress bar) and download their results.",
        epilog="Environment: WEBDATA_API_KEY (required), WEBDATA_API_URL "
               "(default http://127.0.0.1:8000).")
    top.add_argument("--api-url", help="the service (default: $WEBDATA_API_URL, else "
                                       "http://127.0.0.1:8000)")
    top.add_argument("--retries", type=int, default=5, metavar="N",
                     help="retries of a request answered 429/503 or not answered (default 5)")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    scrape = commands.add_parser(
        "scrape", help="one page, as text, markdown or HTML (1 credit)",
        description="Fetch one page and print its content on stdout: one format as it is "
        "(ready for a file or a model), several formats or --json as the API's JSON answer. "
        "1 credit, also when the content is empty; nothing for a refused request.")
    scrape.add_argument("url", metavar="URL")
    scrape.add_argument("--format", action=FormatAction, choices=CONTENT_FORMATS,
                        dest="formats", metavar="FORMAT",
                        help="text (default), markdown, html (the content as clean HTML) or "
                             "raw_html (the page as fetched); repeatable")
    _content(scrape, note="")
    _schema(scrape, "(printed as JSON: its records)")
    _max_age(scrape)
    scrape.add_argument("--json", action="store_true",
                        help="the API's whole answer as JSON (title, formats, links, "
                             "metadata…)")

    site_map = commands.add_parser(
        "map", help="the URLs of a site, one a line (1 credit)",
        description="List a site's URLs from its sitemaps, feeds and links, one a line on "
        "stdout (ready for webdata collect -), or the API's JSON answer with --json. 1 credit.")
    site_map.add_argument("url", metavar="URL")
    site_map.add_argument("--limit", type=int, metavar="N",
                          help="at most N URLs (default 5,000; the plan's max_map_urls at most)")
    site_map.add_argument("--search", metavar="WORDS",
                          help="only URLs whose path, title or metadata hold these words, best "
                               "first")
    site_map.add_argument("--sitemap", choices=("include", "only", "skip"),
                          help="include (default), only (sitemaps alone) or skip them")
    site_map.add_argument("--include-subdomains", action="store_true", default=None,
                          help="the site's subdomains too")
    site_map.add_argument("--include", action="append", metavar="REGEX", dest="include_paths",
                          help="only paths (+ query) matching it (RE2 syntax); repeatable")
    site_map.add_argument("--exclude", action="append", metavar="REGEX", dest="exclude_paths",
                          help="never paths (+ query) matching it (RE2 syntax); repeatable")
    site_map.add_argument("--discover-links", type=int, metavar="HOPS", choices=(0, 1, 2),
                          help="link hops from the start page (0-2, default 1)")
    _max_age(site_map)
    site_map.add_argument("--json", action="store_true",
                          help="the API's whole answer as JSON (titles, lastmod, sources…)")

    collect = commands.add_parser("collect", help="fetch each URL of a file (a batch)",
                                  description="Fetch each URL of a file once: one URL a line, "
                                  "blank lines and lines starting with # skipped; - reads "
                                  "stdin.")
    collect.add_argument("urls_file", metavar="URLS_FILE")
    _creating(collect)

    crawl = commands.add_parser("crawl", help="crawl one site from a start URL",
                                description="Follow links within the start URL's site "
                                "(and its sitemap).")
    crawl.add_argument("url", metavar="URL")
    crawl.add_argument("--max-pages", type=int, metavar="N", help="at most N pages (exact)")
    crawl.add_argument("--max-depth", type=int, metavar="N", help="link hops from the start")
    crawl.add_argument("--include", action="append", metavar="REGEX", dest="include_paths",
                       help="only paths (+ query) matching it (RE2 syntax); repeatable")
    crawl.add_argument("--exclude", action="append", metavar="REGEX", dest="exclude_paths",
                       help="never paths (+ query) matching it (RE2 syntax); repeatable")
    crawl.add_argument("--no-sitemap", action="store_false", dest="use_sitemap",
                       default=None, help="do not read the site's sitemaps")
    _creating(crawl)

    status = commands.add_parser("status", help="show a collection")
    status.add_argument("id", metavar="ID")
    status.add_argument("--json", action="store_true", help="the API's object, as JSON")

    cancel = commands.add_parser("cancel", help="cancel a queued or running collection")
    cancel.add_argument("id", metavar="ID")
    cancel.add_argument("--json", action="store_true", help="the API's object, as JSON")

    export = commands.add_parser("export", help="download a collection's results (waiting, "
                                 "with the progress bar, while it runs)")
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", choices=FORMATS, dest="file_format",
                        help="the file's format, when its name does not tell")
    _output(export, required=True)
    export.add_argument("--status", choices=("succeeded", "failed"),
                        help="only the pages that succeeded, or that failed")
    export.add_argument("--skipped", action="store_true",
                        help="add the URLs the collection skipped, with why, after the results")
    export.add_argument("--removed", action="store_true",
                        help="add the pages a collection with change tracking did not find "
                             "again, after the results (and the skipped URLs)")

    skipped = commands.add_parser("skipped", help="the URLs a collection saw and did not "
                                  "fetch, with why: one a line")
    skipped.add_argument("id", metavar="ID")
    skipped.add_argument("--reason", choices=SKIP_REASONS,
                         help="only the URLs skipped for this reason")
    skipped.add_argument("--json", action="store_true", help="one JSON object a line")
    _monitor(commands)
    commands.add_parser(
        "mcp", help="serve the service's tools to an agent over stdio (MCP)",
        description="An MCP server on stdin/stdout for desktop agents: one tool per operation "
        "(scrape, map, search, crawl, …), each call a request to the service as your account "
        "(WEBDATA_API_KEY, WEBDATA_API_URL). Answers longer than MCP_MAX_RESULT_CHARS "
        "(default 100,000) are cut, saying how to get the rest.")

    changes = commands.add_parser("changes", help="what changed in a collection with change "
                                  "tracking: one page a line")
    changes.add_argument("id", metavar="ID")
    changes.add_argument("--status", choices=CHANGE_STATUSES, action="append",
                         help="only the pages of this status (repeat it for several; "
                              "default: all but same)")
    changes.add_argument("--json", action="store_true",
                         help="one JSON object a line (with each changed page's diff)")
    return top


def _monitor(commands: argparse._SubParsersAction) -> None:
    """``webdata monitor create|list|show|pause|resume|delete``."""
    monitor = commands.add_parser(
        "monitor", help="re-run a crawl or a batch on a schedule, saying what changed",
        description="Monitors: a crawl or a batch re-run on a schedule; each run is a "
        "collection (1 credit per page) compared with the run before.")
    actions = monitor.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create one (its first run starts at once)",
                                description="Monitor the site of URL (a crawl) or the URLs of "
                                "a file (--urls: a batch), every N seconds or on a cron "
                                "schedule (UTC).")
    create.add_argument("url", metavar="URL", nargs="?", help="crawl this URL's site")
    create.add_argument("--urls", metavar="URLS_FILE", dest="urls_file",
                        help="instead: fetch the URLs of this file (one a line; - is stdin)")
    when = create.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", type=int, metavar="SECONDS", help="at least 300")
    when.add_argument("--cron", metavar="EXPR", help='a cron expression, UTC: "0 6 * * *"')
    create.add_argument("--name", help="a name of your own")
    create.add_argument("--webhook-url", metavar="URL",
                        help="the service POSTs each run's outcome there")
    create.add_argument("--notify", choices=("changes", "always"),
                        help="call the webhook for every run, or only for one that found "
                             "something new, changed or removed (default)")
    create.add_argument("--extract", choices=EXTRACTS, default="page",
                        help="what each page gives (default page)")
    create.add_argument("--max-pages", type=int, metavar="N", help="crawl: at most N pages")
    create.add_argument("--max-depth", type=int, metavar="N", help="crawl: link hops")
    create.add_argument("--format", action=FormatAction, choices=CONTENT_FORMATS,
                        dest="formats", metavar="FORMAT",
                        help=f"a content format of each page, repeatable {_PAGE_ONLY}")
    _content(create, note=_PAGE_ONLY)
    _schema(create, "(extract schema)")
    create.add_argument("--json", action="store_true", help="the API's object, as JSON")
    listing = actions.add_parser("list", help="your monitors and their last run")
    listing.add_argument("--json", action="store_true", help="the API's list, as JSON")
    for action, text in (("show", "a monitor and its last runs"), ("pause", "pause one"),
                         ("resume", "resume a paused one (a missed run starts at once)"),
                         ("delete", "delete one (its runs' collections stay)")):
        command = actions.add_parser(action, help=text)
        command.add_argument("id", metavar="ID")
        command.add_argument("--json", action="store_true", help="the API's answer, as JSON")


def _content(command: argparse.ArgumentParser, note: str) -> None:
    """What a page's content is: the whole page or its main content, and CSS selectors."""
    command.add_argument("--whole-page", action="store_false", dest="only_main_content",
                         default=None,
                         help="the whole <body> (no scripts, styles, hidden elements) instead "
                              f"of the readable main content {note}".rstrip())
    command.add_argument("--include-selector", action="append", metavar="CSS",
                         dest="include_selectors",
                         help="only the elements it matches are the content; repeatable "
                              f"{note}".rstrip())
    command.add_argument("--exclude-selector", action="append", metavar="CSS",
                         dest="exclude_selectors",
                         help="remove the elements it matches first; repeatable "
                              f"{note}".rstrip())


def _schema(command: argparse.ArgumentParser, note: str) -> None:
    command.add_argument("--schema", metavar="FILE", type=_schema_file,
                         help="a selector schema, as JSON (- reads stdin): the records it "
                              f"reads from each page {note}")


def _schema_file(name: str) -> object:
    """The JSON of ``--schema``'s file (argparse's one-line error when it cannot be read)."""
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8-sig")
        return json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read a JSON schema from {name}: "
                                         f"{getattr(exc, 'strerror', None) or exc}") from None


def _creating(command: argparse.ArgumentParser) -> None:
    command.add_argument("--extract", choices=EXTRACTS, default="page",
                         help="what each page gives: page (title, text, links, metadata), "
                              "contacts, products, or schema (the records of --schema) "
                              "(default page)")
    _schema(command, "(extract schema)")
    command.add_argument("--format", action=FormatAction, choices=COLLECTION_FORMATS,
                         dest="formats", metavar="FORMAT",
                         help="repeatable: a content format of each page, text (default), "
                              f"markdown, html or raw_html {_PAGE_ONLY}; or the file's "
                              "format, csv, json or jsonl, when -o's name does not tell")
    _content(command, note=_PAGE_ONLY)
    _output(command, required=False)
    command.set_defaults(file_format=None)
    command.add_argument("--no-wait", action="store_true",
                         help="print the collection's id and exit at once")
    command.add_argument("--webhook-url", metavar="URL",
                         help="the service POSTs the finished collection there")
    command.add_argument("--webhook-event", dest="webhook_events", action="append",
                         choices=WEBHOOK_EVENTS, metavar="EVENT",
                         help="an event to POST to --webhook-url (repeatable; default the "
                              "end's: " + ", ".join(WEBHOOK_EVENTS[2:]) + "); one of "
                              + ", ".join(WEBHOOK_EVENTS))
    _max_age(command)
    command.add_argument("--track", nargs="?", const="", metavar="TAG",
                         help="say of each page whether it is new, the same or changed since "
                              "the last collection tracked under TAG (default: the site)")


#: What ``--webhook-event`` may name (the service's ``webhook_events``).
WEBHOOK_EVENTS = ("collection.started", "collection.page", "collection.completed",
                  "collection.cancelled", "collection.failed")


def _max_age(command: argparse.ArgumentParser) -> None:
    command.add_argument("--max-age", type=int, metavar="SECONDS",
                         help="accept the service's cached answer if at most this old "
                              "(same price; default: always fetch)")


def _output(command: argparse.ArgumentParser, *, required: bool) -> None:
    command.add_argument("-o", "--output", metavar="FILE", required=required,
                         help="write the results there once final (.csv, .json or .jsonl)")
    command.add_argument("--fields", metavar="NAMES",
                         help="keep only these keys (CSV: columns), in this order, "
                              "comma-separated: url,status,data.title…")


def map_options(args: argparse.Namespace) -> dict[str, object]:
    """The map options the command line gave (None: not given, not sent)."""
    return {name: getattr(args, name) for name in MAP_OPTIONS}


def page_options(args: argparse.Namespace) -> dict[str, object]:
    """The page options the command line gave (None: not given, not sent)."""
    return {"formats": args.formats, "only_main_content": args.only_main_content,
            "include_selectors": args.include_selectors,
            "exclude_selectors": args.exclude_selectors, "schema": args.schema}
