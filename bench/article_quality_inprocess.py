"""Score crawler.extract.page.extract_page on the article-extraction benchmark, in process.

    python bench/article_quality_inprocess.py [--data DIR] [--quality PATH] [--option K=V ...]

Same metric as /work/shared/tools/quality.py (its scoring functions are imported from that file,
not copied), but without the HTTP service, so extraction settings can be compared quickly and the
extraction time per page is visible. ``--option favor_recall=true --option favor_precision=false``
overrides trafilatura settings for one run (TRAFILATURA_OPTIONS is patched in this process only).

Settings tried on all 181 pages (include_comments=False throughout; F1, then the mean extract_page
time per page in ms, one process, sequential):
    favor_precision=True, include_tables=True   0.9641  15.2   <- chosen (TRAFILATURA_OPTIONS)
    favor_precision, include_tables=False       0.9570  15.0
    favor_precision, deduplicate=True           0.9611  14.7
    favor_precision, include_formatting=True    0.9608  15.3
    favor_precision, fast=True                  0.9461   9.6
    favor_precision, include_images=True        0.9253     -
    trafilatura defaults, include_tables=True   0.9598  14.7
    defaults, include_tables=False              0.9570  14.7
    defaults, deduplicate=True                  0.9514  14.5
    defaults, fast=True                         0.9623  10.7
    favor_recall=True                           0.9593  10.9
    favor_recall, fast=True                     0.9632   9.4   (the fast runner-up)
    favor_recall, fast=True, include_tables=False 0.9590 9.2
The page URL given to trafilatura made no difference (loopback URL vs. the original one).
The text is crawler/extract/text.py's: precision mode, recall mode for a short fragment, and a
body split by ad rows joined: F1 0.972 (docs/benchmarks.md, Article extraction quality).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import shared_tools  # noqa: E402
from bench.shared_tools import load_quality  # noqa: E402
from crawler.extract import page, text  # noqa: E402
from crawler.extract.fetched import FetchedPage  # noqa: E402

DATA = shared_tools.DATA / "article-extraction-benchmark"
QUALITY = shared_tools.QUALITY




def parse_option(text: str) -> tuple[str, object]:
    key, _, value = text.partition("=")
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return key.strip(), lowered == "true"
    return key.strip(), value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--quality", type=Path, default=QUALITY)
    parser.add_argument("--option", action="append", default=[], help="trafilatura KEY=VALUE")
    args = parser.parse_args()

    quality = load_quality(args.quality)
    text.TRAFILATURA_OPTIONS.update(parse_option(o) for o in args.option)
    truth = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))

    scores, times, exact = [], [], 0
    for page_id in sorted(truth):
        body = gzip.decompress((args.data / "html" / f"{page_id}.html.gz").read_bytes())
        html = body.decode("utf-8", errors="replace")  # the service is served utf-8 too
        started = time.perf_counter()
        result = page.extract_page(FetchedPage.from_html(f"http://127.0.0.1/{page_id}", html))
        times.append(time.perf_counter() - started)
        pred, true = result.text or "", truth[page_id].get("articleBody", "")
        scores.append(quality.page_scores(true, pred))
        exact += quality.TOKEN.findall(true) == quality.TOKEN.findall(pred)

    # aggregation exactly as quality.articles(): pages without tp+fp (tp+fn) are left out
    precisions = [quality.ratio(tp, fp, fn) for tp, fp, fn in scores if tp + fp > 0]
    recalls = [quality.ratio(tp, fn, fp) for tp, fp, fn in scores if tp + fn > 0]
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = shared_tools.f1(p, r)
    print(f"options {text.TRAFILATURA_OPTIONS}")
    print(shared_tools.timing_line("extract_page", times))
    print(f"pages={len(truth)} precision={p:.4f} recall={r:.4f} f1={f1:.4f} "
          f"exact={exact / len(truth):.3f}")
    print(f"article text F1 {f1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
