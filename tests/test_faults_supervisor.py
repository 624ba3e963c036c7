"""Workers that keep dying (e.g. while Redis is down) are restarted with a growing delay, not
~70 times a minute; one that had run long enough starts the count again."""

from __future__ import annotations

import re
import sys
import threading
import time

import pytest

from core.config import ROOT
from launcher.supervisor import Supervisor

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

#: A "worker" that notes its start in a file, lives ``argv[2]`` seconds, then fails.
CHILD = "import sys, time; open(sys.argv[1], 'a').write('x'); time.sleep(float(sys.argv[2])); " \
        "sys.exit(1)"


def _watch_for(supervisor: Supervisor, seconds: float) -> None:
    watcher = threading.Thread(target=supervisor.watch, daemon=True)
    watcher.start()
    time.sleep(seconds)
    supervisor.stop_requested = True
    watcher.join(timeout=10)
    supervisor.stop()


def _delays(text: str) -> list[float]:
    return [float(d) for d in re.findall(r"restarting it in ([\d.]+) s", text)]


def test_a_worker_that_dies_at_once_is_restarted_with_backoff(tmp_path, capsys):
    starts = tmp_path / "starts"
    supervisor = Supervisor({}, ROOT, worker_grace=1, restart_delay=0.4, restart_delay_max=1.6,
                            stable_after=60)
    supervisor.spawn("worker-0", [sys.executable, "-c", CHILD, str(starts), "0"])
    _watch_for(supervisor, 4)
    delays = _delays(capsys.readouterr().err)
    assert delays[:4] == [0.4, 0.8, 1.6, 1.6][:len(delays)] and len(delays) >= 3, delays
    # Restarted, but a handful of times in 4 s (about 30 without the back-off).
    assert 2 <= len(starts.read_text()) <= 5


def test_a_worker_that_ran_long_enough_starts_the_count_again(tmp_path, capsys):
    supervisor = Supervisor({}, ROOT, worker_grace=1, restart_delay=0.2, restart_delay_max=10,
                            stable_after=0.3)
    supervisor.spawn("worker-0", [sys.executable, "-c", CHILD, str(tmp_path / "s"), "0.5"])
    _watch_for(supervisor, 2.5)
    delays = _delays(capsys.readouterr().err)
    assert len(delays) >= 2 and set(delays) == {0.2}, delays
