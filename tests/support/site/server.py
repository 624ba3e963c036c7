"""A small website on loopback for real crawls: pages, robots.txt, sitemaps, and hostile
behaviour.

Run alone with ``python -m tests.support.site.server [HOST] [PORT]`` (the benchmarks use it too).
"""

from __future__ import annotations

import functools
import gzip
import http.server
import ipaddress
import socket
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tests.support.site import caching, changing, crawlsite, map_limits, maps, sitemaps, youtube

PAGES = Path(__file__).with_name("pages")
ROBOTS = b"User-agent: *\nDisallow: /private\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: Set by :func:`serve`: where a "hop to loopback" should point.
    loopback_target = "http://127.0.0.1:9/"
    #: Set by :func:`serve`: paths this site answers 404 for (a site without robots.txt…).
    missing: frozenset[str] = frozenset()
    #: The status robots.txt is answered with (its usual lines whatever the status).
    robots_status = 200
    #: Set by :func:`serve`: lines added to robots.txt (a ``Crawl-delay``…).
    robots_extra = ""
    #: Set by :func:`serve`: whether robots.txt names the site's ``/sitemap-news.xml``.
    robots_sitemap = True

    def log_message(self, *args):
        pass

    def send_body(self, body: bytes, ctype: str = "text/html; charset=utf-8", status: int = 200,
                  headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        self.server.requests[path] += 1
        self.server.arrivals.append((time.monotonic(), path))
        if path in self.missing:
            route = _error(404)
        else:
            route = (ROUTES.get(path) or (_slow if path.startswith(SLOW) else None)
                     or crawlsite.route(path) or caching.route(path) or changing.route(path))
        if route:
            route(self)
            return
        page = PAGES / (path.strip("/") + ".html")
        if path.strip("/") and page.is_file() and page.parent == PAGES:
            self.send_body(page.read_bytes())
        else:
            self.send_body(b"<html><body>Not found</body></html>", status=404)


#: ``/slow/<tag>?ms=N``: the article page after N ms (default 500), as a slow real site
#: answers. The server counts how many ``<tag>`` requests are open at once (``open_peak``), so
#: a test can see how many requests one worker (or one account) keeps in flight.
SLOW = "/slow/"


def _slow(h: Handler) -> None:
    tag = h.path.split("?", 1)[0][len(SLOW):]
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
    delay = int(query.get("ms", ["500"])[0]) / 1000
    server = h.server
    with server.lock:
        server.open_now[tag] += 1
        server.open_peak[tag] = max(server.open_peak[tag], server.open_now[tag])
    try:
        time.sleep(delay)
        h.send_body((PAGES / "article.html").read_bytes())
    finally:
        with server.lock:
            server.open_now[tag] -= 1


#: ``/redos``'s links: a backtracking engine (Python's ``re``) needs hours to search
#: ``(a+)+$`` in the first two, each ``a`` more doubling the time; ``/redos/aaa`` is the one
#: such a pattern matches, a page of its own.
REDOS_LINKS = ("/redos/" + "a" * 40 + "!", "/redos/" + "a" * 41 + "!", "/redos/aaa")


def _redos(h: Handler) -> None:
    links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in REDOS_LINKS)
    h.send_body(f"<!doctype html><html lang=en><head><title>Many a</title></head><body>"
                f"<h1>Links with many a</h1><p>{'Words of the page. ' * 20}</p><ul>{links}</ul>"
                "</body></html>".encode())


def _redos_aaa(h: Handler) -> None:
    h.send_body(b"<!doctype html><html lang=en><head><title>aaa</title></head><body>"
                b"<h1>aaa</h1><p>" + b"Words of the page. " * 20 + b"</p></body></html>")


def _robots(h: Handler) -> None:
    named = sitemaps.robots_line(h) if h.robots_sitemap else ""
    h.send_body(ROBOTS + h.robots_extra.encode() + named.encode(), "text/plain",
                status=h.robots_status)


def _private(h: Handler) -> None:
    h.send_body(b"<html><title>secret</title><body>robots says no</body></html>")


def _pdf(h: Handler) -> None:
    h.send_body(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n", "application/pdf")


def _json(h: Handler) -> None:
    h.send_body(b'{"hello": "world"}', "application/json")


def _error(status: int):
    return lambda h: h.send_body(b"<html><body>oops</body></html>", status=status)


def _redirect(location_of):
    def handler(h: Handler) -> None:
        h.send_response(302)
        h.send_header("Location", location_of(h))
        h.send_header("Content-Length", "0")
        h.end_headers()
    return handler


def _meta_refresh(h: Handler) -> None:
    body = (f'<html><head><meta http-equiv="refresh" content="0; url={h.loopback_target}">'
            "</head><body>moving</body></html>")
    h.send_body(body.encode())


def _gzip_bomb(h: Handler) -> None:
    # 64 MiB of zeros compresses to ~64 KiB: over the size limit only once decompressed.
    h.send_body(gzip_bomb(), headers={"Content-Encoding": "gzip"})


def _endless(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    chunk = b"<p>" + b"x" * 65536 + b"</p>"
    try:
        h.wfile.write(b"<html><body>")
        for _ in range(100_000):  # bounded: ~6 GB, far past any limit
            h.wfile.write(chunk)
    except OSError:
        pass
    h.close_connection = True


def _hangup(h: Handler) -> None:
    """Read the request, answer nothing, close the connection."""
    h.close_connection = True


def _drip(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "1000")
    h.end_headers()
    try:
        for _ in range(60):  # one byte a second, for a minute at most
            h.wfile.write(b"x")
            h.wfile.flush()
            time.sleep(1)
    except OSError:
        pass
    h.close_connection = True


@functools.cache
def gzip_bomb() -> bytes:
    return gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)


ROUTES = {
    "/robots.txt": _robots,
    "/private": _private,
    "/doc.pdf": _pdf,
    "/data.json": _json,
    "/missing": _error(404),
    "/broken": _error(500),
    "/loop": _redirect(lambda h: "/loop2"),
    "/loop2": _redirect(lambda h: "/loop"),
    "/redirect-to-article": _redirect(lambda h: "/article"),
    # another port is another site, to a crawl of this one (nothing listens there)
    "/redirect-off-site": _redirect(lambda h: "http://127.0.0.2:9/off-site-landing"),
    "/redirect-to-loopback": _redirect(lambda h: h.loopback_target),
    "/redirect-to-file": _redirect(lambda h: "file:///etc/passwd"),
    "/redirect-to-gopher": _redirect(lambda h: "gopher://127.0.0.2:70/_hello"),
    # control characters raw in the Location header (latin-1: ESC, VT, DEL, NEL)
    "/redirect-hostile": _redirect(lambda h: "/article?x=\x1b[2J\x0b\x7f\x85"),
    "/refresh-to-loopback": _meta_refresh,
    "/gzip-bomb": _gzip_bomb,
    "/endless": _endless,
    "/drip": _drip,
    "/hangup": _hangup,
    "/redos": _redos,
    "/redos/aaa": _redos_aaa,
    **sitemaps.ROUTES,
    **maps.ROUTES,
    **map_limits.ROUTES,
    **youtube.ROUTES,
}


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    #: socketserver's default backlog (5) makes the 6th simultaneous connection wait for a
    #: SYN retry (1 s and more): the concurrency tests open dozens at once.
    request_queue_size = 256

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: How often each path was asked for.
        self.requests: Counter[str] = Counter()
        self.lock = threading.Lock()
        #: ``/slow/<tag>`` requests open now, and the most open at once, by tag.
        self.open_now: Counter[str] = Counter()
        self.open_peak: Counter[str] = Counter()
        #: When each request came (``time.monotonic()``, path), in order.
        self.arrivals: list[tuple[float, str]] = []


def serve(host: str = "127.0.0.2", port: int = 0, loopback_target: str | None = None,
          missing: Iterable[str] = (), robots_extra: str = "", robots_status: int = 200,
          robots_sitemap: bool = True) -> Server:
    """Start the site in a daemon thread; ``server.server_address`` tells where.

    ``missing``: paths answered 404 by this instance (``/robots.txt``, ``/sitemap.xml``…);
    ``robots_extra``: lines its robots.txt adds to the usual ones; ``robots_status``: the
    status it is answered with; ``robots_sitemap``: whether it names ``/sitemap-news.xml``
    (without it and ``robots_extra``, it names no sitemap).
    """
    handler = type("SiteHandler", (Handler,), {"missing": frozenset(missing),
                                               "robots_extra": robots_extra,
                                               "robots_status": robots_status,
                                               "robots_sitemap": robots_sitemap})
    if loopback_target:
        handler.loopback_target = loopback_target
    server = Server((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class HitCounter:
    """A dual-stack listener (IPv4 and IPv6, every local address) that counts connections.

    The SSRF tests point forbidden URLs at its port: any count above zero is a leak.
    :meth:`hits_on` tells which local address a connection came in on (127.0.0.1 or 127.0.0.2
    both reach it), for the tests where one name resolves to both.
    """

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("::", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self.local_addresses: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            local = ipaddress.ip_address(conn.getsockname()[0].split("%", 1)[0])
            self.local_addresses.append(str(local.ipv4_mapped or local))
            self.hits += 1
            conn.close()

    def hits_on(self, address: str) -> int:
        """Connections accepted on this local address (IPv4-mapped ones as IPv4)."""
        return self.local_addresses.count(address)


if __name__ == "__main__":
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.2"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8800
    site = serve(host, port)
    print(f"Test site on http://{host}:{site.server_address[1]}/", flush=True)
    threading.Event().wait()
