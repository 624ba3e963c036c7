"""Crawl4AI's ``fit_markdown`` for saved pages: run with Crawl4AI's own venv, not the project's.

    python3 -m venv ../venv-crawl4ai && ../venv-crawl4ai/bin/pip install crawl4ai
    ../venv-crawl4ai/bin/python bench/crawl4ai_markdown.py --data DIR --out results.json

``bench/markdown_quality.py`` runs it (the project does not depend on Crawl4AI, and its
dependencies would not fit the project's). No browser: each page's saved HTML is given to
``DefaultMarkdownGenerator(content_filter=PruningContentFilter())`` directly, the way
Crawl4AI's documentation shows for fit markdown, with the filter's default settings
(``PruningContentFilter``, as the issue names it; Crawl4AI 0.9.5 calls it deprecated in favour
of ``PruningContentFilterLXML``, which gave the same markdown on 179 of the 181 pages in about
a third of the time). Writes
``{page_id: {"markdown": fit_markdown, "seconds": generation time}}`` and the library's version.
Standard library and Crawl4AI only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from importlib import metadata
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the article benchmark folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ids", nargs="*", help="only these pages")
    args = parser.parse_args()

    from crawl4ai.content_filter_strategy import PruningContentFilter
    from crawl4ai.markdown_generation_strategy import DefaultMarkdownGenerator

    truth = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    results: dict[str, dict[str, object]] = {}
    for page_id in args.ids or sorted(truth):
        body = gzip.decompress((args.data / "html" / f"{page_id}.html.gz").read_bytes())
        html = body.decode("utf-8", errors="replace")
        url = truth[page_id].get("url") or f"http://127.0.0.1/{page_id}"
        started = time.perf_counter()
        generator = DefaultMarkdownGenerator(content_filter=PruningContentFilter())
        result = generator.generate_markdown(html, base_url=url)
        results[page_id] = {"markdown": result.fit_markdown or "",
                            "seconds": time.perf_counter() - started}
    args.out.write_text(json.dumps({"version": metadata.version("crawl4ai"), "pages": results}),
                        encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
