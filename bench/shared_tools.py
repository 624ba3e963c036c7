"""Where the shared benchmark data and measuring tools live, and how the benches use them.

The scoring is imported from ``../shared/tools/quality.py`` itself (never copied), so an
in-process figure can never drift from the one measured through the API.
"""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path
from types import ModuleType

#: ``../shared`` beside the checkout.
SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA = SHARED / "data"
QUALITY = SHARED / "tools" / "quality.py"


def load_quality(path: Path = QUALITY) -> ModuleType:
    """Import quality.py from its path (it is a script, not an installed module)."""
    spec = importlib.util.spec_from_file_location("shared_quality", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def timing_line(name: str, seconds: list[float]) -> str:
    """``name ms/page mean=… p50=… max=…`` for per-page extraction times."""
    ms = [s * 1000 for s in seconds]
    return (f"{name} ms/page mean={statistics.mean(ms):.1f} p50={statistics.median(ms):.1f} "
            f"max={max(ms):.1f}")
