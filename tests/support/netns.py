"""Separate hosts on one Linux machine: network namespaces on a bridge, for the multi-host test
and benchmark (tests/test_multihost.py, bench/multihost.py).

Each host is a namespace (``ip netns``) with its own loopback and one ``eth0``, the far end of
a veth pair whose near end is a port of one bridge, as a machine is plugged into a switch.
Hosts sit on the LAN ``10.213.0.0/24``; the test website sits on a subnet of its own on the
same bridge (``10.213.9.0/24``, routed on-link), so that the crawler's allowed networks can be
that subnet alone, the database and the API then being private addresses the crawler refuses.
The bridge has ``10.213.0.1`` in the root namespace: the test process (the operator's desk)
reaches every host by its address. Every name starts with a prefix (``wdmh-``) so a run can
remove what an interrupted run left behind; and since names and subnets are fixed, runs on one
machine take turns (a lock file, released by the kernel if a run is killed): a second run
waits instead of tearing the first one's hosts down. Needs root (``CAP_NET_ADMIN``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

PREFIX = "wdmh-"
LAN = "10.213.0"
SITE_NET = "10.213.9"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def unavailable() -> str | None:
    """Why namespaces cannot be made here (not root, ``ip netns add`` refused), or None."""
    if os.geteuid() != 0:
        return "the multi-host test needs root (ip netns, veth pairs, a bridge)"
    probe = f"{PREFIX}probe"
    _ip("netns", "del", probe, check=False)
    made = _ip("netns", "add", probe, check=False)
    if made.returncode:
        return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def clean_leftovers(prefix: str = PREFIX) -> None:
    """Remove the namespaces and links a previous run of ``prefix`` left (it was killed), with
    the processes still running in those namespaces."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(prefix):
            _kill_namespace(name)
            _ip("netns", "del", name, check=False)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith(prefix):
            _ip("link", "del", name, check=False)


def _kill_namespace(name: str) -> None:
    """SIGKILL every process running in namespace ``name``."""
    pids = _ip("netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


@dataclass
class Host:
    """One namespace: its name (``db``), namespace, near veth end and address."""

    name: str
    namespace: str
    veth: str
    address: str


@dataclass
class Network:
    """A bridge and hosts on it; :meth:`close` removes all of it and what runs in it."""

    prefix: str = PREFIX
    hosts: dict[str, Host] = field(default_factory=dict)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bridge = f"{self.prefix}br"
        self._turn = open(f"{tempfile.gettempdir()}/{self.prefix}network.lock", "w")  # noqa: SIM115
        fcntl.flock(self._turn, fcntl.LOCK_EX)  # another run's network: wait for its close
        clean_leftovers(self.prefix)
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{LAN}.1/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        _ip("route", "add", f"{SITE_NET}.0/24", "dev", self.bridge)

    def add(self, name: str, number: int, *, site_net: bool = False) -> Host:
        """Host ``name`` at ``.number`` of the LAN (of the site's subnet with ``site_net``)."""
        namespace, veth = f"{self.prefix}{name}", f"{self.prefix}{name}"
        net, other = (SITE_NET, LAN) if site_net else (LAN, SITE_NET)
        address = f"{net}.{number}"
        _ip("netns", "add", namespace)
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        _ip("link", "set", veth, "master", self.bridge, "up")
        inside = ("-n", namespace)
        _ip(*inside, "link", "set", "lo", "up")
        _ip(*inside, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip(*inside, "link", "set", "eth0", "up")
        _ip(*inside, "route", "add", f"{other}.0/24", "dev", "eth0")
        host = Host(name, namespace, veth, address)
        self.hosts[name] = host
        return host

    def run_in(self, name: str, argv: list[str], env: dict[str, str] | None = None,
               **popen: Any) -> subprocess.Popen:
        """``argv`` started in host ``name``'s namespace (kept, for :meth:`close`)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.hosts[name].namespace, *argv],
                                env=env, **popen)
        self.procs.append(proc)
        return proc

    def run(self, name: str, argv: list[str], env: dict[str, str] | None = None,
            timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess:
        """``argv`` run to its end in host ``name``'s namespace; its output, checked."""
        return subprocess.run(["ip", "netns", "exec", self.hosts[name].namespace, *argv],
                              env=env, capture_output=True, text=True, check=True,
                              timeout=timeout, **kwargs)

    def link(self, name: str, up: bool) -> None:
        """Plug host ``name``'s cable in or out (its veth's near end, up or down)."""
        _ip("link", "set", self.hosts[name].veth, "up" if up else "down")

    def close(self) -> None:
        """Stop what runs in the hosts (SIGTERM, then SIGKILL after 10 s), remove the
        namespaces, their veths and the bridge."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 10
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for host in self.hosts.values():
            _kill_namespace(host.namespace)
        clean_leftovers(self.prefix)
        self._turn.close()  # the next run's turn
