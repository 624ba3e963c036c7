"""What bench/answers.py keeps of an answer: run-to-run noise replaced, order kept, and diffs.

Replaced: ids (``req_…``, ``col_…``, ``evt_…``, ``acct_…``, ``wdp_…``, ``whsec_…``) by
``<req:1>``, ``<req:2>``… in the order first seen over the whole run (equal ids stay equal);
times of this run (ISO 8601, between its start and its end plus the collections' retention)
by ``<time>`` (the fixtures' dates are content and stay); the ports of the API, the test site
and the fake provider; the values inside cursors (decoded, normalised, shown as
``<cursor kind:value>``); ``RateLimit-Reset`` (seconds until a window ends) by ``<seconds>``.
``Allow`` is sorted. All of it on the raw text, so that the hash of the normalised bytes
still sees key order and spacing.
"""

from __future__ import annotations

import base64
import binascii
import csv
import difflib
import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

IDS = re.compile(r"\b(req|col|evt|acct)_[0-9a-f]{12,}\b|\b(wdp|whsec)_[A-Za-z0-9_+/=-]{20,}")
TIMES = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
CURSORS = re.compile(r'("next_cursor":\s*"|[?&]cursor=)([A-Za-z0-9_%=-]+)')
PORTS = re.compile(r"\b(127\.0\.0\.[12]|localhost):(\d+)\b")
#: Headers that are no part of the contract (or are the body's length, hashed anyway).
SKIPPED = {"date", "server", "connection", "keep-alive", "content-length", "transfer-encoding"}
#: Headers whose value is a count of seconds from now.
SECONDS = {"ratelimit-reset"}
#: Headers listing a set, in an order that changes from one process to the next (Werkzeug
#: builds ``Allow`` from a set of strings, whose order follows the per-process hash seed).
SETS = {"allow"}


class Normaliser:
    def __init__(self, ports: dict[int, str], start: datetime, end_margin: timedelta):
        self.ports, self.start, self.end_margin = ports, start, end_margin
        self.seen: dict[str, dict[str, int]] = {}

    def text(self, raw: str) -> str:
        raw = CURSORS.sub(self._cursor, raw)
        raw = PORTS.sub(lambda m: f"{m[1]}:<{self.ports[int(m[2])]}-port>"
                        if int(m[2]) in self.ports else m[0], raw)
        raw = TIMES.sub(self._time, raw)
        return IDS.sub(self._id, raw)

    def _id(self, match: re.Match[str]) -> str:
        kind = match[1] or match[2]
        numbers = self.seen.setdefault(kind, {})
        return f"<{kind}:{numbers.setdefault(match[0], len(numbers) + 1)}>"

    def _time(self, match: re.Match[str]) -> str:
        try:
            moment = datetime.fromisoformat(match[0].replace(" ", "T"))
        except ValueError:
            return match[0]
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        now = datetime.now(UTC)
        return "<time>" if self.start <= moment <= now + self.end_margin else match[0]

    def _cursor(self, match: re.Match[str]) -> str:
        try:
            decoded = base64.urlsafe_b64decode(unquote(match[2]).encode()).decode()
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return match[0]
        if not re.fullmatch(r"\w+:[^\"\\\s]+", decoded):
            return match[0]
        return f"{match[1]}<cursor {self.text(decoded)}>"

    def answer(self, request: dict[str, Any], status: int, headers: list[tuple[str, str]],
               body: str, canonical: str = "") -> dict[str, Any]:
        """The record of one answer, ``body`` decoded (:func:`decoded`) and already in its
        canonical order if it had to be."""
        kept: dict[str, str] = {}
        for name, value in headers:
            if name.lower() in SKIPPED:
                continue
            value = "<seconds>" if name.lower() in SECONDS and value.isdigit() else value
            value = ", ".join(sorted(value.split(", "))) if name.lower() in SETS else value
            value = self.text(value)
            kept[name] = f"{kept[name]}\n{value}" if name in kept else value
        text = self.text(body)
        record: dict[str, Any] = {"request": request, "status": status, "headers": kept}
        if canonical:
            record["canonical"] = canonical
        media = header(headers, "Content-Type").split(";")[0].strip()
        is_json = media == "application/json" or media.endswith("+json")
        record["gzip"] = header(headers, "Content-Encoding") == "gzip"
        record["body"] = json.loads(text) if is_json and text else text
        record["body_sha256"] = hashlib.sha256(text.encode("utf-8", "surrogateescape")
                                               ).hexdigest()
        return record


def header(headers: list[tuple[str, str]], name: str) -> str:
    return next((v for k, v in headers if k.lower() == name.lower()), "")


def decoded(body: bytes, headers: list[tuple[str, str]]) -> str:
    if header(headers, "Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return body.decode("utf-8", "surrogateescape")


# --- canonical order, for answers whose records come in completion order ----------------------

Spans = list[tuple[int, int]]


def array_spans(text: str, start: int) -> Spans:
    """Where each item of the JSON array opening at ``text[start]`` is."""
    decoder, space, spans = json.JSONDecoder(), re.compile(r"\s*"), []
    at = space.match(text, start + 1).end()  # type: ignore[union-attr]
    while text[at] != "]":
        _, end = decoder.raw_decode(text, at)
        spans.append((at, end))
        at = space.match(text, end).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = space.match(text, at + 1).end()  # type: ignore[union-attr]
    return spans


def results_spans(text: str) -> Spans:
    """The items of a results page's ``results`` array (none when it is no such page)."""
    found = re.search(r'"results":\s*\[', text)
    return array_spans(text, found.end() - 1) if found else []


def json_spans(text: str) -> Spans:
    """The items of a JSON array (an export in ``json``)."""
    return array_spans(text, text.index("[")) if "[" in text else []


def lines_spans(text: str) -> Spans:
    spans, at = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            spans.append((at, at + len(line.rstrip("\r\n"))))
        at += len(line)
    return spans


def csv_spans(text: str) -> Spans:
    """The CSV records after the header row (a line break inside quotes is no record's end)."""
    spans, begin, quoted = [], 0, False
    for at, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == "\n" and not quoted:
            end = at - 1 if at and text[at - 1] == "\r" else at
            spans.append((begin, end))
            begin = at + 1
    if begin < len(text):
        spans.append((begin, len(text)))
    return spans[1:]


def sorted_records(texts: list[str], spans_of: Callable[[str], Spans]) -> list[str]:
    """``texts`` with their records (``spans_of``) sorted over all of them, by their text
    without ids and times (a result's text starts with its URL), then put back in the same
    places: every byte around the records stays where it was."""
    spans = [spans_of(text) for text in texts]
    records = sorted((text[a:b] for text, found in zip(texts, spans, strict=True)
                      for a, b in found), key=lambda r: TIMES.sub("", IDS.sub("", r)))
    given = iter(records)
    out = []
    for text, found in zip(texts, spans, strict=True):
        pieces, last = [], 0
        for a, b in found:
            pieces += [text[last:a], next(given)]
            last = b
        out.append("".join([*pieces, text[last:]]))
    return out


# --- comparison ----------------------------------------------------------------------------


def differences(name: str, old: dict[str, Any] | None, new: dict[str, Any] | None,
                limit: int = 80) -> list[str]:
    """Readable lines saying how answer ``name`` changed (none when it did not)."""
    if old is None or new is None:
        return [f"=== {name}: {'new case' if old is None else 'no longer answered'}"]
    lines: list[str] = []
    if old["status"] != new["status"]:
        lines.append(f"status {old['status']} -> {new['status']}")
    for key in dict.fromkeys([*old["headers"], *new["headers"]]):
        was, now = old["headers"].get(key), new["headers"].get(key)
        if was != now:
            lines.append(f"header {key}: {was!r} -> {now!r}")
    if not lines and list(old["headers"]) != list(new["headers"]):
        lines.append(f"header order: {list(old['headers'])} -> {list(new['headers'])}")
    if old.get("gzip") != new.get("gzip"):
        lines.append(f"gzip {old.get('gzip')} -> {new.get('gzip')}")
    diff: list[str] = []
    if json.dumps(old["body"]) != json.dumps(new["body"]):  # values and key order
        diff = list(difflib.unified_diff(_lines(old), _lines(new), "recorded", "now",
                                         lineterm="", n=2))
        lines += diff[:limit] + ([f"... {len(diff) - limit} more lines"]
                                 if len(diff) > limit else [])
    if not diff and old["body_sha256"] != new["body_sha256"]:
        lines.append("body: the same values, other bytes (spacing, escaping or number form)")
    return [f"=== {name}", *lines] if lines else []


def _lines(record: dict[str, Any]) -> list[str]:
    """The body to diff, a value a line: JSON indented (JSON Lines too), CSV a cell a line."""
    body = record["body"]
    if not isinstance(body, str):
        return _indented(body)
    media = record["headers"].get("Content-Type", "").split(";")[0].strip()
    try:
        if media == "application/x-ndjson":
            return [line for text in body.splitlines() for line in _indented(json.loads(text))]
    except ValueError:
        pass
    if media == "text/csv":
        head, *rows = list(csv.reader(io.StringIO(body, newline=""))) or [[]]
        return [f"header: {head}"] + [f"row {number}, {name}: {value!r}"
                                      for number, row in enumerate(rows, 1)
                                      for name, value in zip(head, row, strict=False)]
    return body.splitlines()


def _indented(value: Any) -> list[str]:
    return json.dumps(value, indent=2, ensure_ascii=False).splitlines()
