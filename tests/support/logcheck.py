"""What the "malformed input never raises" tests also check: that our code logged no error.

Extractors no longer hide their own bugs behind a catch-all, and where a catch-all must stay
(a third-party library that raises anything on odd markup) it logs at ERROR; so a test feeding
odd input asserts both that nothing raised and that nothing of ours logged an error.
Third-party loggers are left out: trafilatura logs ERROR whenever it declines non-HTML input.
"""

from __future__ import annotations

import logging

import pytest

OUR_PACKAGES = frozenset({"crawler", "api", "worker", "storage"})


def our_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """``"logger: message"`` of every ERROR (or worse) record our packages logged."""
    return [f"{record.name}: {record.getMessage()}" for record in caplog.records
            if record.levelno >= logging.ERROR and record.name.split(".")[0] in OUR_PACKAGES]
