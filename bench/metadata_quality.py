"""Count what a client of ``/scrape`` would trip over in ``language``, the dates and ``author``,
on every page of the shared benchmark sets (articles and products), in process.

    python bench/metadata_quality.py [--data DIR ...]

There is no ground truth for these fields in the sets, so this counts violations of the
contract rather than scoring against labels: pages with no language; dates in none of the
three documented forms (UTC with Z, a calendar date, a local time without offset); authors
that hold an e-mail address, a URL, or the site's / publisher's own name. It prints the counts
and each offending value, so a change can be judged page by page.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crawler.extract.fetched import FetchedPage  # noqa: E402
from crawler.extract.page import extract_page  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
DEFAULT_SETS = (SHARED / "article-extraction-benchmark", SHARED / "product-extraction-benchmark")
#: The three forms of crawler/extract/dates.py.
DATE_FORMS = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z?)?")
EMAIL_OR_URL = re.compile(r"@|https?://|www\.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    languages: Counter[str | None] = Counter()
    for folder in args.data or DEFAULT_SETS:
        for path in sorted((folder / "html").glob("*.html.gz")):
            html = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
            page = extract_page(FetchedPage.from_html("https://example.com/", html))
            counts["pages"] += 1
            languages[page.language] += 1
            meta = page.metadata
            assert meta is not None
            for name in ("published_at", "modified_at"):
                value = getattr(meta, name)
                if value is not None:
                    counts[f"{name} present"] += 1
                    if not DATE_FORMS.fullmatch(value):
                        counts[f"{name} off-contract"] += 1
                        print(f"{path.name}: {name} {value!r}")
            author = meta.author
            if author:
                counts["author present"] += 1
                if EMAIL_OR_URL.search(author) or (
                        meta.site_name and author.casefold() == meta.site_name.casefold()):
                    counts["author not a person"] += 1
                    print(f"{path.name}: author {author!r} (site {meta.site_name!r})")
    counts["language null"] = languages[None]
    print()
    for name, count in counts.items():
        print(f"{name:28} {count}")
    print("languages:", dict(languages.most_common()))


if __name__ == "__main__":
    main()
