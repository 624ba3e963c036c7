"""The collections API, and ``/scrape``, as Python calls: :class:`Client`, for the ``webdata``
command and for batch code alike.

Built on ``requests`` (already in the platform's environment: tldextract and extruct need it),
and on nothing of the platform itself, so the client works from any machine that can reach
the service. Every call is safe to repeat, which is what makes the retries safe: reads are
reads, a cancel may be repeated (docs/api.md, Cancel), and a create or a scrape carries an
``Idempotency-Key`` that stays the same across this client's retries of it, so a request whose
answer was lost is answered from the service's record instead of starting a second, charged
collection or fetching (and charging) the page again.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import requests

from client.bodies import MAP_OPTIONS, batch_body, crawl_body, page_body
from client.errors import (
    NOT_THE_API,
    ApiError,
    ConfigurationError,
    OutputError,
    Unreachable,
    WaitTimeout,
)
from client.monitors import MonitorCalls

DEFAULT_URL = "http://127.0.0.1:8000"
BASE_PATH = "/api/service/v1"
#: Statuses after which a collection never changes again.
FINAL = frozenset({"completed", "cancelled", "failed", "expired"})
#: The formats of a file of results (the export's).
FORMATS = ("json", "jsonl", "csv")
#: What a page's content may be answered as (``formats`` of ``/scrape`` and of a collection
#: of ``extract`` page), in the order the answer lists them; disjoint from :data:`FORMATS`.
CONTENT_FORMATS = ("text", "markdown", "html", "raw_html")
#: Why a collection skips a URL (the ``reason``s of ``GET …/skipped``, in the API's order).
SKIP_REASONS = ("robots", "excluded_path", "not_included", "depth", "off_site", "duplicate",
                "limit", "policy", "cancelled")
#: What change tracking says of a page (the ``status``es of ``GET …/changes``, in its order).
CHANGE_STATUSES = ("new", "same", "changed", "removed")
#: Seconds to wait for a ``/scrape`` answer: the service waits for its page up to
#: ``JOB_WAIT_SECONDS`` (60 by default) before answering 504.
SCRAPE_READ_TIMEOUT = 120.0
#: ``-o`` file endings and the export format each means.
EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
#: 429 and 503 say "not now": retried. A 429 ``collection_limit`` is not about time (the
#: account runs its plan's number of collections): retrying would only wait on the others.
RETRIED_STATUSES = frozenset({429, 503})
NOT_RETRIED_CODES = frozenset({"collection_limit"})
#: Seconds between polls of a running collection (its progress is at most ~1 s old).
POLL_INTERVAL = 0.75
CHUNK = 64 * 1024
#: What an API key may be: it is sent in a header (printable ASCII, no spaces).
_KEY = re.compile(r"[!-~]+")


def format_for(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """The export format: ``fmt`` when given, else the one ``path``'s ending names."""
    if fmt:
        if fmt not in FORMATS:
            raise ConfigurationError(f"Unknown format {fmt!r}: use one of {', '.join(FORMATS)}.")
        return fmt
    found = EXTENSIONS.get(Path(path).suffix.lower())
    if found is None:
        raise ConfigurationError(
            f"Cannot tell the format from {str(path)!r}: name the file .csv, .json or .jsonl, "
            "or give the format (--format csv|json|jsonl).")
    return found


class Client(MonitorCalls):
    """A connection to the service, as one account (its API key).

    ``api_key`` defaults to ``$WEBDATA_API_KEY`` and ``url`` to ``$WEBDATA_API_URL``, else
    ``http://127.0.0.1:8000`` (``make run``). 429 and 503 answers, refused connections and
    time-outs are retried up to ``retries`` times: after ``Retry-After`` seconds when the
    service says (at most ``max_retry_wait``), else after 0.5, 1, 2, 4… seconds.
    """

    def __init__(self, api_key: str | None = None, url: str | None = None, *,
                 retries: int = 5, max_retry_wait: float = 120.0,
                 timeout: tuple[float, float] = (10.0, 60.0),
                 session: requests.Session | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        key = (api_key or os.environ.get("WEBDATA_API_KEY", "")).strip()
        if not key:
            raise ConfigurationError("No API key: set WEBDATA_API_KEY (make run prints one "
                                     "on its 'API key:' line).")
        if not _KEY.fullmatch(key):  # it goes into a header: printable ASCII, no spaces
            raise ConfigurationError("The API key is not one (printable ASCII without spaces, "
                                     "wdp_…): copy the whole key make run or the operator "
                                     "printed.")
        root = (url or os.environ.get("WEBDATA_API_URL") or DEFAULT_URL).strip().rstrip("/")
        if not root.startswith(("http://", "https://")):
            raise ConfigurationError(f"The service URL {root!r} is not an http(s) URL "
                                     "(WEBDATA_API_URL, e.g. http://127.0.0.1:8000).")
        self.url = root if root.endswith(BASE_PATH) else root + BASE_PATH
        self.retries, self.max_retry_wait, self.timeout = retries, max_retry_wait, timeout
        self.sleep = sleep
        self.session = session or requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {key}",
                                     "User-Agent": "webdata-client/0.1"})

    # -- one page -----------------------------------------------------------------------

    def scrape(self, url: str, *, formats: Sequence[str] | None = None,
               only_main_content: bool | None = None,
               include_selectors: Sequence[str] | None = None,
               exclude_selectors: Sequence[str] | None = None,
               include_links: bool | None = None, include_metadata: bool | None = None,
               schema: dict[str, Any] | None = None, max_age: int | None = None,
               idempotency_key: str | None = None) -> dict[str, Any]:
        """``POST /scrape``: one page, 1 credit. Its answer: ``title``, ``text``,
        ``markdown``, ``html``, ``raw_html`` (each format ``None`` unless asked for in
        ``formats``; the service's default is ``["text"]``), ``links``, ``metadata``, and
        ``records`` (what a selector ``schema`` reads, else ``None``); ``cached`` says whether
        it came from the service's page cache, which ``max_age`` (seconds) allows. Options
        left ``None`` are not sent (the service's defaults, docs/api.md)."""
        body = {"url": url, **page_body({
            "formats": formats, "only_main_content": only_main_content,
            "include_selectors": include_selectors, "exclude_selectors": exclude_selectors,
            "include_links": include_links, "include_metadata": include_metadata,
            "schema": schema}), **({"max_age": max_age} if max_age is not None else {})}
        key = idempotency_key or f"webdata-client-{uuid.uuid4()}"
        timeout = (self.timeout[0], max(self.timeout[1], SCRAPE_READ_TIMEOUT))
        return _json(self._request("POST", "/scrape", json=body, idempotency_key=key,
                                   timeout=timeout))

    def map(self, url: str, *, idempotency_key: str | None = None, **options: Any
            ) -> dict[str, Any]:
        """``POST /map``: the URLs of the site of ``url``, 1 credit. ``options``: ``limit``,
        ``search``, ``sitemap``, ``include_subdomains``, ``include_paths``, ``exclude_paths``,
        ``discover_links``, ``max_age`` (docs/api.md); left ``None``, not sent. The answer's
        ``links`` are ``{"url", "title", "lastmod", "source"}``."""
        unknown = set(options) - set(MAP_OPTIONS)
        if unknown:
            raise TypeError(f"unexpected keyword argument {sorted(unknown)[0]!r} (the map "
                            f"options are {', '.join(MAP_OPTIONS)})")
        body = {"url": url, **{name: list(value) if isinstance(value, list | tuple) else value
                               for name, value in options.items() if value is not None}}
        key = idempotency_key or f"webdata-client-{uuid.uuid4()}"
        timeout = (self.timeout[0], max(self.timeout[1], SCRAPE_READ_TIMEOUT))
        return _json(self._request("POST", "/map", json=body, idempotency_key=key,
                                   timeout=timeout))

    # -- collections --------------------------------------------------------------------

    def collect(self, urls: Iterable[str], *, extract: str = "page",
                webhook_url: str | None = None, max_age: int | None = None,
                track: str | None = None, idempotency_key: str | None = None,
                webhook_events: list[str] | None = None, **options: Any) -> dict[str, Any]:
        """Start a batch: each URL fetched once (or taken from the page cache when
        ``max_age`` allows; ``track``: say of each page what changed since the last collection
        under that tag, "" the site's). The collection object (status ``queued``).
        ``options``: those of :meth:`scrape` (``formats=["markdown"]``…), for ``extract`` page
        only, and ``schema`` for ``extract="schema"``; left ``None``, not sent.
        ``webhook_events``: those sent to ``webhook_url`` (default: the end's)."""
        return self.create(batch_body(list(urls), extract=extract, webhook_url=webhook_url,
                                      max_age=max_age, track=track, options=options,
                                      webhook_events=webhook_events),
                           idempotency_key)

    def crawl(self, url: str, *, extract: str = "page", max_pages: int | None = None,
              max_depth: int | None = None, include_paths: list[str] | None = None,
              exclude_paths: list[str] | None = None, use_sitemap: bool | None = None,
              webhook_url: str | None = None, max_age: int | None = None,
              track: str | None = None, idempotency_key: str | None = None,
              webhook_events: list[str] | None = None, **options: Any) -> dict[str, Any]:
        """Start a crawl of ``url``'s site; options left ``None`` take the service's defaults
        (``options``: those of :meth:`scrape`, for ``extract`` page, as for :meth:`collect`)."""
        return self.create(crawl_body(
            url, extract=extract, webhook_url=webhook_url, track=track, options=options,
            webhook_events=webhook_events, max_pages=max_pages, max_depth=max_depth,
            include_paths=include_paths, exclude_paths=exclude_paths, use_sitemap=use_sitemap,
            max_age=max_age),
            idempotency_key)

    def create(self, body: dict[str, Any], idempotency_key: str | None = None
               ) -> dict[str, Any]:
        """``POST /collections`` with ``body``, under one Idempotency-Key for every retry."""
        key = idempotency_key or f"webdata-client-{uuid.uuid4()}"
        return _json(self._request("POST", "/collections", json=body, idempotency_key=key))

    def get(self, collection_id: str) -> dict[str, Any]:
        """The collection object: status, progress, credits used."""
        return _json(self._request("GET", f"/collections/{_id(collection_id)}"))

    def cancel(self, collection_id: str) -> dict[str, Any]:
        """Cancel it: answered once no further page is fetched or charged. A finished one
        raises :class:`ApiError` ``conflict``."""
        return _json(self._request("POST", f"/collections/{_id(collection_id)}/cancel"))

    def wait(self, collection_id: str, *,
             on_progress: Callable[[dict[str, Any]], None] | None = None,
             interval: float | None = None, timeout: float | None = None
             ) -> dict[str, Any]:
        """Poll until the collection is final; its last object. ``on_progress`` gets every
        object read (:class:`client.progress.ProgressDisplay` draws them), one every
        ``interval`` seconds (default :data:`POLL_INTERVAL`). After ``timeout``
        seconds, :class:`WaitTimeout`: the collection goes on, wait again if you like."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            collection = self.get(collection_id)
            if on_progress is not None:
                on_progress(collection)
            if collection["status"] in FINAL:
                return collection
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout(collection_id, timeout or 0)
            time.sleep(POLL_INTERVAL if interval is None else interval)

    def results(self, collection_id: str, *, status: str | None = None,
                limit: int = 100) -> Iterator[dict[str, Any]]:
        """Every page result so far, in completion order (``GET …/results``, page by page).
        For a file of them all, :meth:`export` streams faster."""
        return self._pages(collection_id, "results", limit, status=status)

    def skipped(self, collection_id: str, *, reason: str | None = None,
                limit: int = 1000) -> Iterator[dict[str, Any]]:
        """Every URL the collection saw and did not fetch so far, with why (``GET …/skipped``,
        page by page): ``{"url", "reason", "duplicate_of"}``; ``reason`` keeps one reason."""
        return self._pages(collection_id, "skipped", limit, reason=reason)

    def changes(self, collection_id: str, *, status: str | Sequence[str] | None = None,
                limit: int = 1000) -> Iterator[dict[str, Any]]:
        """What changed in the pages of a collection with change tracking (``GET …/changes``,
        page by page): ``{"url", "status", "fetched_at", "previous_fetched_at", "diff"}``;
        ``status`` keeps those statuses (:data:`CHANGE_STATUSES`; default: all but same)."""
        statuses = status if status is None or isinstance(status, str) else ",".join(status)
        return self._pages(collection_id, "changes", limit, status=statuses)

    def _pages(self, collection_id: str, name: str, limit: int, **query: str | None
               ) -> Iterator[dict[str, Any]]:
        """The items of ``GET …/<name>`` (its list is ``name`` too), following
        ``next_cursor``; ``query`` values left ``None`` are not sent."""
        cursor = None
        while True:
            params = {"limit": limit, **{k: v for k, v in query.items() if v is not None},
                      **({"cursor": cursor} if cursor else {})}
            page = _json(self._request("GET", f"/collections/{_id(collection_id)}/{name}",
                                       params=params))
            yield from page[name]
            cursor = page["next_cursor"]
            if cursor is None or not page[name]:
                return

    def export(self, collection_id: str, path: str | os.PathLike[str],
               fmt: str | None = None, *, status: str | None = None,
               fields: str | Sequence[str] | None = None, skipped: bool = False,
               removed: bool = False) -> Path:
        """Download every result to ``path`` (``GET …/export``), streamed: any size in
        constant memory. The format comes from ``fmt`` or the file's ending (.csv, .json,
        .jsonl); ``status`` keeps the pages that succeeded or failed, ``fields`` the keys (CSV:
        columns) named, in that order; ``skipped`` adds the skipped URLs after the results
        (``"status": "skipped"``, their ``reason``), ``removed`` the pages a collection with
        change tracking did not find again (``"status": "removed"``). Written to
        ``<path>.part`` and renamed when complete, so ``path`` is never a half file. Call
        :meth:`wait` first to get everything."""
        target = Path(path)
        include = ",".join(kind for kind, asked in (("skipped", skipped), ("removed", removed))
                           if asked)
        params = {"format": format_for(target, fmt), **({"status": status} if status else {}),
                  **({"include": include} if include else {})}
        if fields:
            params["fields"] = fields if isinstance(fields, str) else ",".join(fields)
        response = self._request("GET", f"/collections/{_id(collection_id)}/export",
                                 params=params, stream=True)
        part = target.with_name(target.name + ".part")
        try:
            with response, part.open("wb") as out:
                for chunk in response.iter_content(CHUNK):  # gzip undone on the way
                    out.write(chunk)
            os.replace(part, target)
        except requests.RequestException as exc:
            part.unlink(missing_ok=True)
            raise Unreachable(f"The download of {collection_id} broke off: {exc}") from None
        except OSError as exc:  # a folder gone, a disk full, a name that is a folder
            part.unlink(missing_ok=True)
            raise OutputError(f"Cannot write {target}: {exc.strerror or exc}.") from None
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        return target

    # -- the one place requests are sent ------------------------------------------------

    def _call(self, method: str, path: str, *, json: Any = None,
              idempotency_key: str | None = None) -> Any:
        """The JSON answer of a request (:meth:`_request`)."""
        return _json(self._request(method, path, json=json, idempotency_key=idempotency_key))

    def _request(self, method: str, path: str, *, json: Any = None,
                 params: dict[str, Any] | None = None, idempotency_key: str | None = None,
                 stream: bool = False, timeout: tuple[float, float] | None = None
                 ) -> requests.Response:
        """Send it, retrying what may be retried; the 2xx response, else :class:`ApiError`
        or :class:`Unreachable`."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self.session.request(method, self.url + path, json=json,
                                                params=params, headers=headers,
                                                timeout=timeout or self.timeout,
                                                stream=stream)
            except requests.RequestException as exc:
                if last:
                    raise Unreachable(f"Cannot reach the service at {self.url}: "
                                      f"{_reason(exc)}") from None
                self.sleep(_backoff(attempt))
                continue
            if response.ok:
                return response
            error = _api_error(response)
            response.close()
            if last or not _retried(error, attempt, idempotency_key):
                raise error
            if error.retry_after is not None and error.retry_after > self.max_retry_wait:
                raise error
            self.sleep(error.retry_after if error.retry_after is not None
                       else _backoff(attempt))
        raise AssertionError("unreachable")  # the loop returns or raises


def _json(response: requests.Response) -> Any:
    """The JSON of a 2xx answer; :class:`ApiError` when it is not JSON (a captive portal, a
    proxy's page, another service at that URL)."""
    try:
        return response.json()
    except ValueError:
        raise _not_the_api(response, "but not JSON") from None


def _id(collection_id: str) -> str:
    """The id as a single path segment: never a way to another path of the API."""
    collection_id = collection_id.strip()
    if not collection_id or "/" in collection_id or collection_id in (".", ".."):
        raise ConfigurationError(f"{collection_id!r} is not a collection id (col_…).")
    return requests.utils.quote(collection_id, safe="")


def _retried(error: ApiError, attempt: int, idempotency_key: str | None) -> bool:
    if error.status in RETRIED_STATUSES:
        return error.code not in NOT_RETRIED_CODES
    # Our own earlier try of this create may still be running on the service (its answer was
    # lost): the key is claimed until it ends, and then the retry gets its stored answer.
    return error.status == 409 and idempotency_key is not None and attempt > 0


def _backoff(attempt: int) -> float:
    return min(0.5 * 2 ** attempt, 30.0)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _api_error(response: requests.Response) -> ApiError:
    retry_after = _retry_after(response.headers.get("Retry-After"))
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return ApiError(response.status_code, body["error"],
                        str(body.get("message") or body["error"]),
                        errors=body.get("errors") if isinstance(body.get("errors"), dict)
                        else None,
                        request_id=body.get("request_id"), retry_after=retry_after)
    return _not_the_api(response, response.reason, body, retry_after)


def _not_the_api(response: requests.Response, said: str, body: Any = None,
                 retry_after: float | None = None) -> ApiError:
    """An answer that is not the API's (a proxy's page, a captive portal, another service at
    that URL): its status, ``said``, and the start of what it sent (``body`` when it was
    JSON of another shape, else its text)."""
    text = str(body)[:200] if body else " ".join(response.text.split())[:200]
    return ApiError(response.status_code, NOT_THE_API,
                    f"The service answered HTTP {response.status_code} {said}"
                    + (f": {text}" if text else "."), retry_after=retry_after)


def _reason(exc: requests.RequestException) -> str:
    """The root cause ("Connection refused"), not urllib3's nesting of it."""
    if isinstance(exc, requests.Timeout):
        return "no answer in time"
    found = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
    return found.group(1).strip() if found else (str(exc) or type(exc).__name__)
