"""The crawl bench's website: ``../shared/tools/make_site.py``'s pages, served by nginx.

nginx (Debian's ``nginx-light``; ``make bench-deps`` installs it) runs as one foreground
process (``daemon off; master_process off``) with a config, logs and temp dirs in the bench's
temp dir, listening on several loopback ports at once: each ``127.0.0.1:port`` is a host of
its own to the crawler's politeness gates. Its access log has one line per request,
``$msec $server_port $status $request_uri``, so a bench can tell when the last request to a
port was answered. Without nginx, a threaded Python server stands in (said in the report).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from shared_tools import SHARED
from stack import start

NGINX = "/usr/sbin/nginx"
MAKE_SITE = SHARED / "tools" / "make_site.py"

CONFIG = """daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; text/plain txt; application/xml xml; }}
    default_type application/octet-stream;
    log_format bench '$msec $server_port $status $request_uri';
    access_log {log} bench;
    client_body_temp_path {tmp}/nginx-body;
    proxy_temp_path {tmp}/nginx-proxy;
    fastcgi_temp_path {tmp}/nginx-fastcgi;
    uwsgi_temp_path {tmp}/nginx-uwsgi;
    scgi_temp_path {tmp}/nginx-scgi;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 100000;
    server {{
{listens}
        root {root};
    }}
}}
"""

# The stand-in: HTTP/1.1 keep-alive, TCP_NODELAY, one thread per connection, every port in
# one process, the same access log lines as nginx's.
FALLBACK = """
import functools, http.server, sys, threading, time
root, log = sys.argv[1], open(sys.argv[2], "a", buffering=1)
class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_request(self, code="-", size="-"):
        log.write(f"{time.time():.3f} {self.server.server_port} {int(code)} {self.path}\\n")
    def log_message(self, *args): pass
class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
for port in sys.argv[3:]:
    server = Server(("127.0.0.1", int(port)), functools.partial(Handler, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
threading.Event().wait()
"""


@dataclass
class Site:
    """A generated site being served on ``ports``; ``server`` says by what."""

    root: Path
    ports: list[int]
    log: Path
    server: str

    def url(self, port: int, path: str = "/") -> str:
        return f"http://127.0.0.1:{port}{path}"

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def requests(self, port: int, since: int = 0) -> list[tuple[float, str]]:
        """(unix time answered, path) of each request to ``port`` logged after byte
        ``since`` of the access log."""
        with self.log.open("rb") as log:
            log.seek(since)
            lines = log.read().decode("utf-8", "replace").splitlines()
        found = []
        for line in lines:
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[1] == str(port):
                found.append((float(parts[0]), parts[3]))
        return found


def generate(root: Path, pages: int, base_url: str) -> None:
    """Run make_site.py (from its own directory, never copied) into ``root``."""
    if not MAKE_SITE.exists():
        raise SystemExit(f"{MAKE_SITE} is missing: the crawl bench needs ../shared/tools.")
    subprocess.run([sys.executable, MAKE_SITE.name, str(root), str(pages), base_url],
                   cwd=MAKE_SITE.parent, check=True, stdout=subprocess.DEVNULL)


def serve(root: Path, ports: list[int], tmp: Path, env: dict[str, str],
          procs: list[subprocess.Popen]) -> Site:
    """Serve ``root`` on every port of ``ports`` (nginx when installed); not waited for."""
    log = tmp / "access.log"
    if Path(NGINX).exists():
        listens = "\n".join(f"        listen 127.0.0.1:{port};" for port in ports)
        conf = tmp / "nginx.conf"
        conf.write_text(CONFIG.format(tmp=tmp, log=log, listens=listens, root=root))
        start([NGINX, "-c", str(conf), "-e", str(tmp / "nginx-error.log")], env, procs,
              stderr=None)
        version = subprocess.run([NGINX, "-v"], capture_output=True, text=True).stderr.strip()
        return Site(root, ports, log, f"{NGINX} ({version.split(': ')[-1]})")
    start([sys.executable, "-c", FALLBACK, str(root), str(log), *map(str, ports)], env, procs)
    return Site(root, ports, log, "Python ThreadingHTTPServer (nginx not installed: "
                                  "run `make bench-deps`)")
