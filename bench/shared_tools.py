"""Where the shared benchmark data and measuring tools live, and how the benches use them.

The scoring is imported from ``../shared/tools/quality.py`` itself (never copied), so an
in-process figure can never drift from the one measured through the API.
"""

from __future__ import annotations

import importlib.util
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
