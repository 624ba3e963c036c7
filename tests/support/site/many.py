"""A website of many small pages for the multi-host test and benchmark:
``python -m tests.support.site.many HOST PORT[@MS] [PORT[@MS]…] [--pages N] [--delay-ms MS]``.

Page ``/p/<i>`` (0 ≤ i < N) links to its three children ``3i+1…3i+3`` (those below N), its
parent and one page elsewhere (``(7i+5) mod N``: a duplicate for the crawl), so a crawl from
``/p/0`` reaches all N within about log3(2N) hops. Pages are ~2 KB of text, small enough that
extraction does not starve two cores, and each is answered after ``--delay-ms`` (a slow site,
for the benchmark: the waiting is then the crawl's bound, not the CPU), or after ``MS`` on a
port given as ``PORT@MS``. robots.txt allows all.
Every port serves the same site: each ``host:port`` is a host of its own to the crawler's
politeness gates. One thread per connection, HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import argparse
import http.server
import threading
import time

ROBOTS = b"User-agent: *\nAllow: /\n"
WORDS = ["river", "tide", "harbour", "lantern", "meadow", "orchard", "granite", "copper",
         "willow", "falcon", "ember", "quarry", "thistle", "beacon", "saddle", "marble",
         "cinder", "hollow", "pepper", "juniper"]


def page_links(i: int, pages: int) -> list[int]:
    """The pages page ``i`` links to."""
    children = [c for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < pages]
    return [*children, (i - 1) // 3 if i else 0, (7 * i + 5) % pages]


def page(i: int, pages: int) -> bytes:
    """Page ``i``: a title, a few paragraphs that differ from page to page, its links."""
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(12)]
    paragraphs = "".join(
        f"<p>{' '.join(words[k:] + words[:k]).capitalize()} of page {i}, paragraph {k}. "
        f"{'The quick survey of the estuary goes on. ' * 3}</p>" for k in range(6))
    links = "".join(f'<li><a href="/p/{j}">Page {j}</a></li>' for j in page_links(i, pages))
    return (f"<!doctype html><html lang=en><head><title>Page {i} of {pages}</title></head>"
            f"<body><article><h1>Page {i}</h1>{paragraphs}</article><nav><ul>{links}</ul></nav>"
            "</body></html>").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    pages = 3000
    delay = 0.0

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        status, ctype, body = 404, "text/html; charset=utf-8", b"<html>Not found</html>"
        if path == "/robots.txt":
            status, ctype, body = 200, "text/plain", ROBOTS
        elif path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < self.pages:
            if self.delay:
                time.sleep(self.delay)
            status, body = 200, page(int(path[3:]), self.pages)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("host")
    parser.add_argument("ports", nargs="+", help="PORT, or PORT@MS: its own delay")
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--delay-ms", type=int, default=0)
    args = parser.parse_args()
    for spec in args.ports:
        port, _, delay_ms = spec.partition("@")
        handler = type("ManyHandler", (Handler,), {
            "pages": args.pages, "delay": int(delay_ms or args.delay_ms) / 1000})
        server = Server((args.host, int(port)), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"{args.pages} pages on {args.host}, ports {args.ports}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
