"""The page cache's codec, measured: zstd against zlib on the answers the cache keeps.

Extracts pages of the shared article benchmark as ``/scrape`` with every format would (text,
markdown, clean HTML, raw HTML), makes each answer's JSON, then compresses and decompresses
each with zlib (levels 1, 6) and zstd (levels 1, 3). Prints the ratio and the time a page.

    .venv/bin/python bench/cache_codec.py [--pages 40]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import time
import zlib
from pathlib import Path

import zstandard

from core.items import plain
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page

DATA = Path(__file__).resolve().parent.parent.parent / "shared/data/article-extraction-benchmark"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--pages", type=int, default=40)
args = parser.parse_args()
blobs = []
for name in sorted(glob.glob(str(DATA / "html" / "*")))[:args.pages]:
    raw = Path(name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    page = FetchedPage(url="https://example.com/a", html=raw.decode("utf-8", "replace"))
    data = extract_page(page, formats=("text", "markdown", "html", "raw_html"))
    blobs.append(json.dumps(plain(data)).encode())
print(f"{len(blobs)} pages, mean answer {sum(map(len, blobs)) / len(blobs) / 1024:.0f} KB")
for name, comp, decomp in [
    ("zlib-1", lambda b: zlib.compress(b, 1), zlib.decompress),
    ("zlib-6", lambda b: zlib.compress(b, 6), zlib.decompress),
    ("zstd-3", zstandard.ZstdCompressor(level=3).compress, zstandard.ZstdDecompressor().decompress),
    ("zstd-1", zstandard.ZstdCompressor(level=1).compress, zstandard.ZstdDecompressor().decompress),
]:
    started = time.perf_counter()
    packed = [comp(blob) for blob in blobs]
    packing = time.perf_counter() - started
    started = time.perf_counter()
    for blob in packed:
        decomp(blob)
    unpacking = time.perf_counter() - started
    ratio = sum(map(len, blobs)) / sum(map(len, packed))
    print(f"{name}: ratio {ratio:.2f}, compress {packing / len(blobs) * 1000:.3f} ms a page, "
          f"decompress {unpacking / len(blobs) * 1000:.3f} ms a page")
