"""Score crawler.extract.products.extract_products on the product-extraction benchmark, in process.

    python bench/product_quality_inprocess.py [--data DIR] [--quality PATH] [--verbose]

Same metric as /work/shared/tools/quality.py products: its prediction picking
(``predict_product``: first product, its first offer, product sku else offer sku) and its
per-page counting (``match``, ``as_decimal``, ``ratio``) are imported from that file, not copied;
only the summing loop of ``quality.products()`` is repeated here, because it is not a function
of its own there (it also starts the HTTP server). Each page is read with the original URL of
``ground-truth.json``; the service sees a loopback URL instead, which changes URLs in the answer
but not the scored price, sku and availability (checked: same figures with a loopback URL).
``--verbose`` prints every page's miss.

Rules tried on all 70 pages (price / sku / availability F1, each row adds to the one above):
    JSON-LD, else microdata, RDFa, OpenGraph; offers in document order   .765 / .490 / .661
    nested offers inherit from their AggregateOffer; priced and available
      offers first; OpenGraph sale price before the regular price        .786 / .490 / .703
    sku falls back to productID                                          .786 / .500 / .703
    sku of the main product from labelled page text ("Item number: …")   .786 / .611 / .703
    a priced offer without availability is InStock                       .786 / .611 / .800
    cheapest offer first (a sale offer beside the regular one)           .803 / .611 / .800
    merging JSON-LD with microdata/OpenGraph: no page has its product in two syntaxes with
      complementary values, so no change (not kept)
What is left is mostly pages without any product markup (20 of 70: Amazon and small shops),
which only a visual or DOM-heuristic extractor could read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

from itemadapter import ItemAdapter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import shared_tools  # noqa: E402
from bench.shared_tools import load_quality  # noqa: E402
from crawler.extract.fetched import FetchedPage  # noqa: E402
from crawler.extract.products import extract_products  # noqa: E402

DATA = shared_tools.DATA / "product-extraction-benchmark"
QUALITY = shared_tools.QUALITY
ATTRIBUTES = ("price", "sku", "availability")




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--quality", type=Path, default=QUALITY)
    parser.add_argument("--verbose", action="store_true", help="print each page's misses")
    args = parser.parse_args()

    quality = load_quality(args.quality)
    truth = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    totals = {attribute: [0, 0, 0] for attribute in ATTRIBUTES}
    sources: dict[str, int] = {}
    times = []
    for page_id in sorted(truth):
        item = truth[page_id]
        body = gzip.decompress((args.data / "html" / f"{page_id}.html.gz").read_bytes())
        html = body.decode("utf-8", errors="replace")  # the service is served utf-8 too
        started = time.perf_counter()
        result = extract_products(FetchedPage.from_html(item["url"], html))
        times.append(time.perf_counter() - started)
        source = result.products[0].source if result.products else "none"
        sources[source] = sources.get(source, 0) + 1
        # the metric reads the answer as the service writes it (plain JSON values)
        pred = quality.predict_product(ItemAdapter(result).asdict())
        for attribute in ATTRIBUTES:  # as in quality.products()
            true_values = set(item.get(attribute, []))
            value = pred.get(attribute)
            if attribute == "price":
                true_values = {quality.as_decimal(v) for v in true_values} - {None}
                value = quality.as_decimal(value) if value is not None else None
            counts = quality.match(true_values, value)
            for i, count in enumerate(counts):
                totals[attribute][i] += count
            if args.verbose and counts != (1, 0, 0) and (true_values or value is not None):
                print(f"{page_id[:8]} {source:<9} {attribute:<12} "
                      f"predicted={value!s:<16} true={sorted(map(str, true_values))}")

    print(f"pages={len(truth)} first product source: "
          + ", ".join(f"{k}={v}" for k, v in sorted(sources.items())))
    print(shared_tools.timing_line("extract_products", times))
    f1s = []
    for attribute, (tp, fp, fn) in totals.items():
        p, r = quality.ratio(tp, fp, fn), quality.ratio(tp, fn, fp)
        f1 = shared_tools.f1(p, r)
        f1s.append(f1)
        print(f"{attribute:<13} F1={f1:.3f} precision={p:.3f} recall={r:.3f} "
              f"(tp={tp} fp={fp} fn={fn})")
    print(f"product F1 price/sku/availability {f1s[0]:.3f}/{f1s[1]:.3f}/{f1s[2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
