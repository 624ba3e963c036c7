"""What a process of ours is, from its command line, whatever interpreter flags it carries
(``worker.keeper`` and its replacements repeat the pool's: ``-B``, ``-X dev``…)."""

from __future__ import annotations

import psutil


def module_of(process: psutil.Process) -> str | None:
    """The module a ``python … -m MODULE …`` process runs; None for another program."""
    words = process.cmdline()
    return words[words.index("-m") + 1] if "-m" in words[:-1] else None


def value_of(process: psutil.Process, option: str) -> str | None:
    """The value given to ``option`` on the process's command line, if any."""
    words = process.cmdline()
    return words[words.index(option) + 1] if option in words[:-1] else None
