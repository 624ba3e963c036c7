"""``webdata``: pages and collections from the command line.

    webdata scrape https://site.example/post --format markdown > post.md
    webdata scrape https://site.example/post --format markdown --format html   # JSON
    webdata collect urls.txt --extract contacts -o out.csv
    webdata crawl https://site.example/ --max-pages 500 --format markdown -o site.jsonl
    webdata crawl https://site.example/ --whole-page --exclude-selector nav -o site.csv
    webdata status col_…          webdata cancel col_…          webdata export col_… -o out.csv
    webdata skipped col_… --reason robots          webdata changes col_… --status removed
    webdata monitor create https://site.example/ --cron "0 6 * * *"     webdata monitor list

The key comes from ``WEBDATA_API_KEY``, the service from ``WEBDATA_API_URL`` (default
``http://127.0.0.1:8000``). ``scrape`` prints the page's content on stdout (one format as it
is, several as the API's JSON). While a collection runs, a progress bar is drawn on stderr
(stdout keeps only what a script would read: the id with ``--no-wait``, the collection with
``--json``). Ctrl-C asks whether to cancel the collection. Every failure is one line on stderr
and a non-zero exit, never a traceback: 1 for an error or a collection that did not complete,
2 for a bad command line, 130 after Ctrl-C. The options are :mod:`client.arguments`'.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console

from client import monitor_cli
from client.arguments import map_options, page_options, parser
from client.errors import ApiError, WebdataError
from client.http import FINAL, Client, format_for
from client.progress import ProgressDisplay, skipped_text, summary

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C
#: Where a line of a URL file ends (see :func:`read_urls`).
_LINE_END = re.compile(r"\r\n|\r|\n")


class Stop(Exception):
    """End the command with ``status`` after ``message`` (on stderr)."""

    def __init__(self, status: int, message: str = ""):
        super().__init__(message)
        self.status, self.message = status, message


def main(argv: list[str] | None = None) -> int:
    """The console script; the exit status."""
    args = parser().parse_args(argv)
    err = Console(stderr=True, highlight=False)
    try:
        return COMMANDS[args.command](args, err)
    except Stop as stop:
        if stop.message:
            print(stop.message, file=sys.stderr)
        return stop.status
    except WebdataError as exc:
        print(f"webdata: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # outside a wait: nothing of ours is running
        print("\nwebdata: interrupted.", file=sys.stderr)
        return INTERRUPTED


def run_scrape(args: argparse.Namespace, err: Console) -> int:
    """One page: the asked format on stdout as it is, or the answer as JSON (several formats,
    ``--json``). An empty content (selectors that match nothing) prints nothing and says so
    on stderr: the page was fetched and charged, it is not an error."""
    answer = _client(args).scrape(args.url, max_age=args.max_age, **page_options(args))
    formats = args.formats or ["text"]
    if args.json or len(formats) > 1:
        return _print(json.dumps(answer, indent=2))
    if args.schema is not None and not args.formats:  # the records are what was asked for
        return _print(json.dumps(answer.get("records"), indent=2, ensure_ascii=False))
    content = answer.get(formats[0])
    if not content:
        hint = ("do the selectors match anything?" if args.include_selectors
                else "--whole-page takes all of its body")
        print(f"webdata: the page gave no {formats[0]} ({hint}); "
              f"{answer.get('credits_used', 1)} credit used.", file=sys.stderr)
        return 0
    return _print(content)


def run_map(args: argparse.Namespace, err: Console) -> int:
    """A site's URLs, one a line (for ``webdata collect -``), or the answer as JSON."""
    answer = _client(args).map(args.url, **map_options(args))
    if args.json:
        return _print(json.dumps(answer, indent=2, ensure_ascii=False))
    if answer.get("truncated"):
        print(f"webdata: {len(answer['links'])} of {answer['total_found']} URLs found "
              "(truncated: --limit, or reading stopped early).", file=sys.stderr)
    if not answer["links"]:
        print("webdata: no URL found; 1 credit used.", file=sys.stderr)
        return 0
    return _print("\n".join(link["url"] for link in answer["links"]))


def _print(text: str) -> int:
    """``text`` on stdout, ending with a line end; 0. A reader that went away (``| head``) ends
    the command quietly; a character the output's encoding lacks is replaced, not a
    traceback."""
    out = sys.stdout
    text = text if text.endswith("\n") else text + "\n"
    try:
        try:
            out.write(text)
        except UnicodeEncodeError:
            encoding = out.encoding or "ascii"
            out.write(text.encode(encoding, "replace").decode(encoding))
        out.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at nothing, so that flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return 1
    return 0


def run_collect(args: argparse.Namespace, err: Console) -> int:
    output = _checked_output(args)
    urls = read_urls(args.urls_file)
    client = _client(args)
    created = client.collect(urls, extract=args.extract, webhook_url=args.webhook_url,
                             webhook_events=args.webhook_events, max_age=args.max_age,
                             track=args.track, **page_options(args))
    return _follow(client, created, args, output, err,
                   f"{len(urls)} URL{'s' if len(urls) > 1 else ''}")


def run_crawl(args: argparse.Namespace, err: Console) -> int:
    output = _checked_output(args)
    client = _client(args)
    created = client.crawl(args.url, extract=args.extract, max_pages=args.max_pages,
                           max_depth=args.max_depth, include_paths=args.include_paths,
                           exclude_paths=args.exclude_paths, use_sitemap=args.use_sitemap,
                           webhook_url=args.webhook_url, webhook_events=args.webhook_events,
                           max_age=args.max_age, track=args.track, **page_options(args))
    return _follow(client, created, args, output, err, f"crawl of {args.url}")


def run_status(args: argparse.Namespace, err: Console) -> int:
    collection = _client(args).get(args.id)
    print(json.dumps(collection, indent=2) if args.json else describe(collection))
    return 0


def run_cancel(args: argparse.Namespace, err: Console) -> int:
    collection = _client(args).cancel(args.id)
    print(json.dumps(collection, indent=2) if args.json else summary(collection))
    return 0


def run_export(args: argparse.Namespace, err: Console) -> int:
    output = _checked_output(args)
    client = _client(args)
    collection = client.get(args.id)
    if collection["status"] not in FINAL:
        collection = watch(client, collection["id"], err)
    client.export(collection["id"], output, args.file_format, status=args.status,
                  fields=args.fields, skipped=args.skipped, removed=args.removed)
    print(f"Saved {output}.", file=sys.stderr)
    return 0


def run_skipped(args: argparse.Namespace, err: Console) -> int:
    """The URLs a collection skipped, one a line: its reason, the URL (and what a duplicate
    duplicates); or one JSON object a line. The URLs are the service's, as links were found
    (percent-encoded: one a line whatever they hold)."""
    def line(item: dict[str, Any]) -> str:
        also = f" (of {item['duplicate_of']})" if item.get("duplicate_of") else ""
        return f"{item['reason']:<13} {item['url']}{also}"

    return _listed(_client(args).skipped(args.id, reason=args.reason), line, args.json,
                   "no URL skipped")


def run_changes(args: argparse.Namespace, err: Console) -> int:
    """What changed in a tracked collection, one page a line: its status, the URL; or one JSON
    object a line (the diffs are there)."""
    return _listed(_client(args).changes(args.id, status=args.status),
                   lambda item: f"{item['status']:<8} {item['url']}", args.json, "no change")


def _listed(items: Iterable[dict[str, Any]], line: Callable[[dict[str, Any]], str],
            as_json: bool, none: str) -> int:
    """``items`` one a line on stdout (``line`` of each, or its JSON); when there is none,
    ``none`` "(so far)" on stderr."""
    lines = [json.dumps(item, ensure_ascii=False) if as_json else line(item) for item in items]
    if not lines:
        print(f"webdata: {none} (so far).", file=sys.stderr)
        return 0
    return _print("\n".join(lines))


def run_monitor(args: argparse.Namespace, err: Console) -> int:
    """``webdata monitor ACTION`` (:mod:`client.monitor_cli`)."""
    if args.action == "create" and (args.url is None) == (args.urls_file is None):
        raise Stop(2, "webdata monitor create: give a URL to crawl, or --urls FILE, not both.")
    return _print(monitor_cli.run_monitor(args, _client(args), read_urls))


def run_mcp(args: argparse.Namespace, err: Console) -> int:
    """``webdata mcp``: the MCP server on stdio (:mod:`client.mcp_server`), as the account of
    the configured key."""
    client = _client(args)  # checks the key and URL first: one line, not a traceback
    from client.mcp_server import MAX_RESULT_CHARS, serve_stdio

    limit = os.environ.get("MCP_MAX_RESULT_CHARS", "")
    serve_stdio(client.url, client.session.headers["Authorization"].removeprefix("Bearer "),
                max_chars=int(limit) if limit.isdigit() else MAX_RESULT_CHARS)
    return 0


def _follow(client: Client, created: dict[str, Any], args: argparse.Namespace,
            output: Path | None, err: Console, what: str) -> int:
    """After a create: the id alone (``--no-wait``), or the bar until final, then the file."""
    collection_id = created["id"]
    if args.no_wait:
        print(collection_id)
        return 0
    print(f"Collection {collection_id} started ({what}, extract {created['extract']}); "
          "Ctrl-C asks to cancel it.", file=sys.stderr)
    try:
        final = watch(client, collection_id, err)
    except WebdataError as exc:
        raise Stop(1, f"webdata: {exc}\nThe collection {collection_id} goes on: "
                      f"webdata status {collection_id}") from None
    print(summary(final), file=sys.stderr)
    if output is not None:
        client.export(collection_id, output, args.file_format, fields=args.fields)
        print(f"Saved {output}.", file=sys.stderr)
    return 0 if final["status"] == "completed" else 1


def watch(client: Client, collection_id: str, err: Console) -> dict[str, Any]:
    """Wait with the progress bar until the collection is final; its last object.

    Ctrl-C pauses the bar and asks whether to cancel it: y cancels and stops the command
    (130), anything else goes on waiting; a second Ctrl-C (or no terminal to ask on) stops
    the command but not the collection.
    """
    display = ProgressDisplay(collection_id, err)
    try:
        while True:
            try:
                display.resume()  # inside the try: a Ctrl-C at any moment is a question
                return client.wait(collection_id, on_progress=display)
            except KeyboardInterrupt:
                try:  # a second Ctrl-C may come at any point of asking, not only at the prompt
                    display.pause()
                    answer = ask(f"\nCancel collection {collection_id}? [y/N] ")
                except KeyboardInterrupt:
                    answer = None
                if answer is None:
                    raise Stop(INTERRUPTED, f"\nNot cancelled: collection {collection_id} "
                               f"goes on (webdata status {collection_id}).") from None
                if answer:
                    _cancel(client, collection_id)
    finally:
        display.pause()


def _cancel(client: Client, collection_id: str) -> None:
    try:
        final = client.cancel(collection_id)
    except ApiError as exc:
        if exc.code != "conflict":
            raise
        final = client.get(collection_id)  # it finished meanwhile
    raise Stop(INTERRUPTED, summary(final) + (
        f"\nIts results so far: webdata export {collection_id} -o FILE"
        if final["progress"]["done"] else ""))


def ask(prompt: str) -> bool | None:
    """The user's answer on the terminal: True for yes; None when there is nobody to ask
    (stdin is not a terminal, or closed)."""
    if not sys.stdin.isatty():
        return None
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        return None
    return line.strip().lower() in ("y", "yes")


def read_urls(name: str) -> list[str]:
    """The URLs of a file: one a line; blank lines and ``#`` comments skipped. Lines end at
    LF, CRLF or CR only (``str.splitlines`` also cuts at VT, FF, NEL, U+2028…): a control
    character inside a line stays in its URL, which the service refuses, naming it."""
    try:
        # utf-8-sig: a byte order mark, as Windows editors save, is not part of the first URL
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise Stop(1, f"webdata: cannot read {name}: "
                      f"{getattr(exc, 'strerror', None) or exc}") from None
    urls = [line.strip(" \t") for line in _LINE_END.split(text)]
    urls = [url for url in urls if url and not url.startswith("#")]
    if not urls:
        raise Stop(1, f"webdata: {name} holds no URL (one a line).")
    return urls


def _checked_output(args: argparse.Namespace) -> Path | None:
    """``-o``'s path, checked before anything is started (and charged): its format is
    known, its folder exists and takes files, and the name is not a folder's."""
    if not args.output:
        return None
    path = Path(args.output)
    format_for(path, args.file_format)
    if not path.parent.is_dir():
        raise Stop(1, f"webdata: the folder of {path} does not exist.")
    if path.is_dir():
        raise Stop(1, f"webdata: {path} is a folder; name a file in it.")
    if not os.access(path.parent, os.W_OK):
        raise Stop(1, f"webdata: cannot write in the folder of {path}.")
    return path


def _client(args: argparse.Namespace) -> Client:
    return Client(url=args.api_url, retries=max(0, args.retries))


def describe(collection: dict[str, Any]) -> str:
    """The collection object for a person: one field a line."""
    progress = collection["progress"]
    rows = [
        ("id", collection["id"]),
        ("mode", f"{collection['mode']} (extract {collection['extract']})"),
        ("status", collection["status"] + (f" ({collection['stop_reason']})"
                                           if collection.get("stop_reason") else "")),
        ("progress", f"{progress['done']}/{progress['total']} pages: {progress['succeeded']} "
                     f"succeeded, {progress['failed']} failed "
                     f"({progress['robots_blocked']} blocked by robots.txt)"),
        ("skipped", skipped_text(progress.get("skipped") or {}) or "none"),
        *([("changes", skipped_text(progress["changes"]) or "none")]
          if progress.get("changes") is not None else []),
        ("credits", str(collection["credits_used"])),
        ("created", collection["created_at"]),
        ("started", collection.get("started_at") or "-"),
        ("finished", collection.get("finished_at") or "-"),
        ("expires", collection.get("expires_at") or "-"),
        *([("monitor", collection["monitor_id"])] if collection.get("monitor_id") else []),
    ]
    webhook = collection.get("webhook")
    if webhook:
        rows.append(("webhook", f"{webhook['status']} ({webhook['attempts']} attempts, last "
                                f"HTTP {webhook.get('last_status') or '-'})"))
    return "\n".join(f"{name:<9} {value}" for name, value in rows)


#: Each command's function, by its name (:func:`client.arguments.parser`).
COMMANDS = {"scrape": run_scrape, "map": run_map, "collect": run_collect, "crawl": run_crawl,
            "status": run_status, "cancel": run_cancel, "export": run_export,
            "skipped": run_skipped, "changes": run_changes, "monitor": run_monitor,
            "mcp": run_mcp}
