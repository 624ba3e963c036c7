"""Which SHARE and MIN_PAGES make "repeated blocks" removal drop a crawl's boilerplate and keep
its content: measured on synthetic sites, in process (no Redis, no crawl).

    PYTHONPATH=. .venv/bin/python bench/repeated_blocks.py   # ~2 min
    flags: --seeds N (crawl orders, 20) --batch N (pages stored at once, 8) --sizes 5 12 ...
           --json

The sites are ``../shared/tools/make_site.py``'s (run from its own directory into a temporary
one: nav, aside and footer boilerplate around an ``<article>`` of paragraphs), of 5, 12, 30,
100 and 500 pages, with blocks injected *inside the article*, where main-content extraction
keeps them:

- boilerplate, to be removed: a cookie notice on every page, a "Subscribe to our newsletter"
  box (heading + paragraph) on 60 % of the pages, a "Related reading" list (heading + 4 items)
  on 80 %;
- shared content, to be kept: a product disclaimer on the product pages (every 5th: 20 %, a
  section of the site), a quote on 3 pages; and a "Summary" heading on 40 % of the pages, each
  followed by its own paragraph (counted apart, see below);
- two sites of very similar pages: 5 pages that open with the same intro paragraph, and 8
  product variants (same heading, description and spec rows, their own colour and price).
  What every page of a site shares cannot be told from a template by counting: reported, not
  judged.

Each page is extracted as a crawl does it (``extract_page(..., formats=["text", "markdown",
"html"])``), with ``only_main_content`` true (the default) and false (the whole body: nav,
aside and footer are content there, their repeated units counted as template). Then, for each
SHARE x MIN_PAGES of the grid and each of ``--seeds`` shuffled crawl orders, the pages go
through what a crawl does: stored the first page alone (nothing else is in flight yet), then
``--batch`` pages at a time (a slice flushes what landed every 0.5 s, and a site has
COLLECTION_HOST_CONCURRENCY = 8 pages in flight; 1 is a slow or Crawl-delay site), each batch
counted (``collecting.repeats.count_pages``, the Redis script's twin, SAMPLE included) and
stored without the blocks repeated by then; every page cleaned from the final counts when the
crawl completes.
``without_repeated`` only looks at the page's own units, so its result is memoised on the
repeated fingerprints the page holds; the first seed of the configured constants is also run
through ``collecting.repeats.clean_outcomes`` itself, uncached, and must give the same pages.

Scored per occurrence (a page's unit in one format): boilerplate recall (injected boilerplate
removed, per format; in the whole-body run also the template's nav items, aside heading and
footer line), content loss (the article's own units, the disclaimer and the quote removed: the
hard constraint is none), Summary headings removed, and pages left empty (no format left).
The Summary heading counts as a loss of the page's structure (the label of its own
paragraph; a page type's headings, "Ingredients", "Specifications", are content), but a
lighter one than its words: a setting whose final counts remove it is out, while the few
removed from the first pages stored (before the counts knew better, never put back) are
reported, as "early".

The pick: no word of content lost on any site, run or seed and the Summary heading kept by
the final counts; then the highest boilerplate recall (main-content run, averaged over the
sites so the small ones weigh as much as the 500 pages), the template recall, the fewest
Summary headings removed, the larger MIN_PAGES and SHARE. Exit 0 when collecting/repeats.py's
constants are that pick, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.shared_tools import SHARED  # noqa: E402
from collecting import repeats  # noqa: E402
from collecting.repeats import SAMPLE, WARMUP, count_pages, repeated_in  # noqa: E402
from core.items.result import plain  # noqa: E402
from crawler.extract.fetched import FetchedPage  # noqa: E402
from crawler.extract.page import extract_page  # noqa: E402
from crawler.extract.repeated import (  # noqa: E402
    FORMATS,
    fingerprint,
    format_units,
    page_units,
    without_repeated,
)

MAKE_SITE = SHARED / "tools" / "make_site.py"
SHARES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_PAGES = (2, 3, 4, 6, 8)
SIZES = (5, 12, 30, 100, 500)
MODES = {"main": True, "body": False}  # only_main_content
BASE = "http://site.test"

COOKIE = ("We use cookies to give you the best experience on our website. By continuing to "
          "browse you agree to our cookie policy.")
SUBSCRIBE = ("Subscribe to our newsletter",
             "Get the week's best stories in your inbox every Friday. No spam, and you can "
             "unsubscribe at any time.")
RELATED = ("Related reading", "How search engines see your pages", "A short history of the "
           "web crawler", "Ten ways to speed up a static site", "What robots.txt can and cannot do")
DISCLAIMER = ("Prices include VAT. Specifications may change without notice; always read the "
              "label and follow the instructions for use.")
QUOTE = "The best way to predict the future is to invent it."
SUMMARY = "Summary"
INTRO = ("Welcome to the Acme field guide. Every page of this guide explains one part of our "
         "service, with examples you can try yourself.")
VARIANT = ("Acme Widget", "The Acme Widget is made of brushed steel and lasts for years in "
           "daily use.", "Every widget is tested in our workshop before it ships.",
           "Weight", "1.2 kg", "Material", "Steel")
COLOURS = ("red", "blue", "green", "black", "white", "yellow", "orange", "purple")

#: Category of a unit, by its words (the same in every format: "- Section 3", "Section 3").
BOILERPLATE, TEMPLATE, CONTENT = "boilerplate", "template", "content"
DISCLAIMER_KIND, QUOTE_KIND, SUMMARY_KIND, SHARED_KIND = "disclaimer", "quote", "summary", "shared"
KEPT = (CONTENT, DISCLAIMER_KIND, QUOTE_KIND)  # what must never be removed


#: Each injected block, by the unit that shows it is there.
SHOWN_BY = {"cookie": COOKIE, "subscribe": SUBSCRIBE[1], "related": RELATED[1],
            "disclaimer": DISCLAIMER, "quote": QUOTE, "summary": SUMMARY, "intro": INTRO,
            "description": VARIANT[1]}


def words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9]+", text.lower()))


_KNOWN = {**{words(t): BOILERPLATE for t in (COOKIE, *SUBSCRIBE, *RELATED)},
          words(DISCLAIMER): DISCLAIMER_KIND, words(QUOTE): QUOTE_KIND,
          words(SUMMARY): SUMMARY_KIND, words(INTRO): SHARED_KIND,
          **{words(t): SHARED_KIND for t in VARIANT[:3]},
          **{words(f"{a}{gap}{b}"): SHARED_KIND for a, b in (VARIANT[3:5], VARIANT[5:7])
             for gap in ("", " ")},  # a table row: "| Weight | 1.2 kg |", html's "Weight1.2 kg"
          words("Related"): TEMPLATE}


def kind_of(unit: str) -> str:
    key = words(unit)
    if key in _KNOWN:
        return _KNOWN[key]
    if (len(key) == 2 and key[0] == "section" and key[1].isdigit()) or key[:2] == (
            "copyright", "acme"):
        return TEMPLATE  # make_site's nav items and footer line
    return CONTENT


# --- the sites --------------------------------------------------------------------------------

@dataclass
class Site:
    name: str
    pages: list[str]  # HTML, in page order
    injected: dict[str, int] = field(default_factory=dict)  # what, on how many pages


def make_site(tmp: Path, pages: int) -> list[str]:
    """make_site.py's ``pages`` article pages (run from its own directory, never copied)."""
    out = tmp / f"site-{pages}"
    subprocess.run([sys.executable, MAKE_SITE.name, str(out), str(pages)], cwd=MAKE_SITE.parent,
                   check=True, stdout=subprocess.DEVNULL)
    return [(out / "p" / f"{i}.html").read_text() for i in range(pages)]


def _inside_article(html: str, first: str = "", after_title: str = "", middle: str = "",
                    last: str = "") -> str:
    head, _, rest = html.partition("<article>")
    article, _, tail = rest.partition("</article>")
    title_end = article.index("</h1>") + len("</h1>")
    title, paras = article[:title_end], article[title_end:]
    cut = [m.end() for m in re.finditer("</p>", paras)][1]  # after the 2nd paragraph
    return (f"{head}<article>{first}{title}{after_title}{paras[:cut]}{middle}{paras[cut:]}"
            f"{last}</article>{tail}")


def _some(rng: random.Random, n: int, share: float) -> set[int]:
    return set(rng.sample(range(n), round(share * n)))


def mixed_site(tmp: Path, n: int) -> Site:
    rng = random.Random(n)
    subscribe, related, summary = _some(rng, n, 0.6), _some(rng, n, 0.8), _some(rng, n, 0.4)
    quoted = set(rng.sample(range(n), 3))
    product = {i for i in range(n) if i % 5 == 0}  # make_site's Product pages
    pages = []
    for i, html in enumerate(make_site(tmp, n)):
        last = ""
        if i in product:
            last += f"<p>{DISCLAIMER}</p>"
        if i in related:
            last += (f"<h3>{RELATED[0]}</h3><ul>" + "".join(
                f'<li><a href="/p/{k}.html">{t}</a></li>' for k, t in enumerate(RELATED[1:]))
                + "</ul>")
        if i in subscribe:
            last += (f"<div><h3>{SUBSCRIBE[0]}</h3><p>{SUBSCRIBE[1]}</p>"
                     '<form><input type="email" name="email"></form></div>')
        pages.append(_inside_article(
            html, first=f"<p>{COOKIE}</p>",
            after_title=(f"<h2>{SUMMARY}</h2><p>In short, page {i} sums up "
                         f"{' and '.join(rng.sample(COLOURS, 3))} findings of its own.</p>"
                         if i in summary else ""),
            middle=f"<blockquote><p>{QUOTE}</p></blockquote>" if i in quoted else "",
            last=last))
    return Site(f"mixed-{n}", pages, {
        "cookie": n, "subscribe": len(subscribe), "related": len(related),
        "disclaimer": len(product), "quote": 3, "summary": len(summary)})


def similar_site(tmp: Path, n: int = 5) -> Site:
    """Every page opens with the same intro paragraph; the rest is its own."""
    pages = [_inside_article(html, first=f"<p>{COOKIE}</p><p>{INTRO}</p>")
             for html in make_site(tmp, n)]
    return Site(f"similar-{n}", pages, {"cookie": n, "intro": n})


def variants_site(tmp: Path, n: int = 8) -> Site:
    """Product variants: the same heading, description and spec rows; a colour and price each."""
    pages = []
    for i, html in enumerate(make_site(tmp, n)):
        head, _, rest = html.partition("<article>")
        _, _, tail = rest.partition("</article>")
        rows = [VARIANT[3:5], VARIANT[5:7], ("Colour", COLOURS[i])]
        article = (f"<p>{COOKIE}</p><h1>{VARIANT[0]}</h1><p>{VARIANT[1]}</p><p>{VARIANT[2]}</p>"
                   "<table>" + "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
                   + f"</table><p>Price: {19 + i}.90 EUR, in {COLOURS[i]}.</p>")
        pages.append(f"{head}<article>{article}</article>{tail}")
    return Site(f"variants-{n}", pages, {"cookie": n, "description": n})


# --- extraction and the crawl's counting -------------------------------------------------------

class Extracted:
    """One site's pages extracted one way, with what the scoring needs of each."""

    def __init__(self, site: Site, only_main_content: bool):
        self.datas: list[dict[str, Any]] = []
        self.kinds: list[dict[str, dict[str, str]]] = []  # page → format → fingerprint → kind
        for i, html in enumerate(site.pages):
            page = extract_page(FetchedPage.from_html(f"{BASE}/p/{i}.html", html),
                                formats=list(FORMATS), only_main_content=only_main_content)
            data = plain(page)
            self.datas.append(data)
            self.kinds.append({name: {fingerprint(unit): kind_of(unit) for unit in
                                      format_units(name, data[name] or "")} for name in FORMATS})
        self.units = [frozenset(page_units(data)) for data in self.datas]
        self._stored: dict[tuple[int, frozenset[str]], tuple[Any, frozenset[str]]] = {}
        self._final: dict[tuple[int, frozenset[str], frozenset[str]], dict[str, set[str]]] = {}

    def found(self) -> Counter:
        """Pages whose extracted text holds each injected block (of :data:`SHOWN_BY`)."""
        found: Counter = Counter()
        for data in self.datas:
            units = {words(unit) for unit in format_units("text", data["text"] or "")}
            found.update(what for what, text in SHOWN_BY.items() if words(text) in units)
        return found

    def stored(self, i: int, gone: frozenset[str]) -> tuple[Any, frozenset[str]]:
        """Page ``i`` as stored without ``gone`` (its repeated units then), and its units."""
        key = (i, gone)
        if key not in self._stored:
            data = without_repeated(self.datas[i], gone)
            self._stored[key] = data, frozenset(page_units(data))
        return self._stored[key]

    def final(self, i: int, gone: frozenset[str], later: frozenset[str]) -> dict[str, set[str]]:
        """The fingerprints left in each format of page ``i`` stored without ``gone`` and
        cleaned of ``later`` when the crawl completed."""
        key = (i, gone, later)
        if key not in self._final:
            data = without_repeated(self.stored(i, gone)[0], later)
            self._final[key] = {name: set(map(fingerprint, format_units(name, (data or {}).get(
                name) or ""))) for name in FORMATS}
        return self._final[key]


def batches(order: list[int], batch: int) -> list[list[int]]:
    """The stores of a crawl: its first page alone (nothing else is in flight yet), then
    ``batch`` pages at a time."""
    return [order[:1]] + [order[start:start + batch] for start in range(1, len(order), batch)]


@dataclass
class Crawled:
    left: list[dict[str, set[str]]]  # per page, the fingerprints left in each format
    early: list[frozenset[str]]  # per page, what was removed as it was stored that the
    # final counts would have kept (never put back)


def crawl(site: Extracted, order: list[int], share: float, min_pages: int, batch: int
          ) -> Crawled:
    """What each page holds once the crawl completed: counted and stored in ``order``
    (:func:`batches`), then cleaned from the final counts (collecting/repeats.py's rules)."""
    counts: dict[str, int] = {}
    gone: dict[int, frozenset[str]] = {}
    for stored in batches(order, batch):
        count_pages(counts, [site.units[i] for i in stored])
        repeated = repeated_in(counts, share, min_pages, WARMUP)
        for i in stored:
            gone[i] = frozenset(repeated & site.units[i])
    final = repeated_in(counts, share, min_pages)
    pages = range(len(site.datas))
    return Crawled([site.final(i, gone[i], frozenset(final & site.stored(i, gone[i])[1]))
                    for i in pages], [gone[i] - final for i in pages])


class _Blocks:
    """RepeatedBlocks' interface on a dict (what clean_outcomes asks of it)."""

    def __init__(self, share: float, min_pages: int):
        self.counts: dict[str, int] = {}
        self.share, self.min_pages = share, min_pages

    def count(self, pages: list[set[str]]) -> set[str]:
        count_pages(self.counts, pages)
        return repeated_in(self.counts, self.share, self.min_pages, WARMUP)


def check_uncached(site: Extracted, order: list[int], batch: int) -> None:
    """The configured constants through clean_outcomes itself, uncached: the same pages."""
    blocks = _Blocks(repeats.SHARE, repeats.MIN_PAGES)
    stored: dict[int, Any] = {}
    for chunk in batches(order, batch):
        for i, data in zip(chunk, repeats.clean_outcomes(
                blocks, [site.datas[i] for i in chunk]), strict=True):  # type: ignore[arg-type]
            stored[i] = data
    final = repeated_in(blocks.counts)
    cached = crawl(site, order, repeats.SHARE, repeats.MIN_PAGES, batch).left
    for i in range(len(site.datas)):
        data = without_repeated(stored[i], final) or {}
        left = {name: set(map(fingerprint, format_units(name, data.get(name) or "")))
                for name in FORMATS}
        if left != cached[i]:
            raise SystemExit(f"the memoised crawl differs from clean_outcomes on page {i}")


# --- scoring ----------------------------------------------------------------------------------

def score(site: Extracted, crawled: Crawled, tally: Counter) -> None:
    """Add each occurrence (page, format, unit) to ``tally``: (kind, format, present|removed|
    early: removed as stored, kept by the final counts)."""
    for kinds, left, early in zip(site.kinds, crawled.left, crawled.early, strict=True):
        for name in FORMATS:
            for unit, kind in kinds[name].items():
                tally[kind, name, "present"] += 1
                if unit not in left[name]:
                    tally[kind, name, "removed"] += 1
                    if unit in early:
                        tally[kind, name, "early"] += 1
        if not any(left.values()):
            tally["empty"] += 1
        tally["pages"] += 1


def rate(tally: Counter, kinds: tuple[str, ...], names: tuple[str, ...] = FORMATS,
         how: str = "removed") -> float | None:
    present = sum(tally[k, n, "present"] for k in kinds for n in names)
    removed = sum(tally[k, n, how] for k in kinds for n in names)
    return removed / present if present else None


def lost(tally: Counter, kind: str, how: str = "removed") -> int:
    return sum(tally[kind, n, how] for n in FORMATS)


def pct(value: float | None) -> str:
    return "  -" if value is None else f"{100 * value:3.0f}"


# --- the run ----------------------------------------------------------------------------------

def measure(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="repeated-blocks-") as tmp:
        sites = [mixed_site(Path(tmp), n) for n in args.sizes]
        sites += [similar_site(Path(tmp)), variants_site(Path(tmp))]
    extracted = {(s.name, mode): Extracted(s, main) for s in sites for mode, main in MODES.items()}
    grid = [(share, least) for share in SHARES for least in MIN_PAGES]
    tallies: dict[tuple[str, str, float, int], Counter] = defaultdict(Counter)
    for (name, mode), site in extracted.items():
        orders = []
        for seed in range(args.seeds):
            order = list(range(len(site.datas)))
            random.Random(seed).shuffle(order)
            orders.append(order)
        check_uncached(site, orders[0], args.batch)
        for share, least in grid:
            for order in orders:
                score(site, crawl(site, order, share, least, args.batch),
                      tallies[name, mode, share, least])
    return {"sites": sites, "extracted": extracted, "tallies": tallies, "grid": grid,
            "seconds": time.monotonic() - started}


def summary_of(tallies: dict, names: list[str], share: float, least: int) -> dict[str, Any]:
    """One setting over ``names`` (sites): recall per site, losses summed."""
    main = [tallies[n, "main", share, least] for n in names]
    body = [tallies[n, "body", share, least] for n in names]
    recalls = [rate(t, (BOILERPLATE,)) for t in main]
    both = main + body
    return {
        "share": share, "min_pages": least,
        "recall_main": sum(r or 0 for r in recalls) / len(recalls),
        "recall_main_by_format": {f: sum(rate(t, (BOILERPLATE,), (f,)) or 0 for t in main)
                                  / len(main) for f in FORMATS},
        "recall_body": rate(_sum(body), (BOILERPLATE,)),
        "template_body": rate(_sum(body), (TEMPLATE,)),
        "lost": {k: sum(lost(t, k) for t in both) for k in KEPT},
        "lost_early": sum(lost(t, k, "early") for t in both for k in KEPT),
        "summary_early": rate(_sum(both), (SUMMARY_KIND,), how="early"),
        "summary_final": sum(lost(t, SUMMARY_KIND) - lost(t, SUMMARY_KIND, "early")
                             for t in both),
        "content_loss": rate(_sum(both), KEPT),
        "summary_removed": rate(_sum(both), (SUMMARY_KIND,)),
        "shared_removed": rate(_sum(both), (SHARED_KIND,)),
        "empty": sum(t["empty"] for t in both),
        "by_site": dict(zip(names, recalls, strict=True)),
    }


def _sum(tallies: list[Counter]) -> Counter:
    total: Counter = Counter()
    for tally in tallies:
        total.update(tally)
    return total


def safe(r: dict[str, Any]) -> bool:
    """No word of content lost, and the Summary heading kept by the final counts (the pages
    stored before they were known may lose it: a few headings, reported as "early")."""
    return not sum(r["lost"].values()) and not r["summary_final"]


def best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    return max(filter(safe, rows), default=None, key=lambda r: (
        round(r["recall_main"], 4), round(r["template_body"] or 0, 4),
        -(r["summary_removed"] or 0), r["min_pages"], r["share"]))


def _top(rows: list[dict[str, Any]]) -> set[tuple[float, int]]:
    """The safe settings that remove the most boilerplate (ties all)."""
    most = max((round(r["recall_main"], 4) for r in filter(safe, rows)), default=None)
    return {(r["share"], r["min_pages"]) for r in filter(safe, rows)
            if round(r["recall_main"], 4) == most}


def report(result: dict[str, Any], args: argparse.Namespace) -> bool:
    tallies, grid = result["tallies"], result["grid"]
    mixed = [s.name for s in result["sites"] if s.name.startswith("mixed")]
    similar = [s.name for s in result["sites"] if not s.name.startswith("mixed")]
    print(f"sites: {', '.join(f'{s.name} ({s.injected})' for s in result['sites'])}")
    for s in result["sites"]:
        for mode in MODES:
            found = result["extracted"][s.name, mode].found()
            short = {what: f"{found[what]}/{n}" for what, n in s.injected.items()
                     if found[what] != n}
            if short:
                print(f"  {s.name} {mode}: pages whose text keeps the injected block: {short}")
    print(f"{args.seeds} shuffled crawl orders per setting, the first page stored alone, then "
          f"{args.batch} at a time; SAMPLE={SAMPLE}; {result['seconds']:.0f} s\n")
    print("All mixed sites. bp: boilerplate occurrences removed, % (main content: the mean of "
          "the sites; body: the whole-body run; tmpl: its nav, aside heading and footer); lost: "
          "occurrences of content removed (both runs, all seeds; early: removed as stored, kept "
          "by the final counts); Summary: headings removed, %; empty: pages left with nothing")
    print(f"{'SHARE':>5} {'MIN':>3} | {'bp main':>7} {'text':>4} {'md':>4} {'html':>4} | "
          f"{'bp body':>7} {'tmpl':>4} | {'lost: own':>9} {'discl':>5} {'quote':>5} "
          f"{'early':>5} | {'Summary':>7} {'early':>5} | {'empty':>5}")
    rows = [summary_of(tallies, mixed, share, least) for share, least in grid]
    for r in rows:
        by = r["recall_main_by_format"]
        print(f"{r['share']:>5} {r['min_pages']:>3} | {pct(r['recall_main']):>7} "
              f"{pct(by['text']):>4} {pct(by['markdown']):>4} {pct(by['html']):>4} | "
              f"{pct(r['recall_body']):>7} {pct(r['template_body']):>4} | "
              f"{r['lost'][CONTENT]:>9} {r['lost'][DISCLAIMER_KIND]:>5} "
              f"{r['lost'][QUOTE_KIND]:>5} {r['lost_early']:>5} | "
              f"{pct(r['summary_removed']):>7} {pct(r['summary_early']):>5} | {r['empty']:>5}")
    print("\nBy site: boilerplate recall % (main content) / occurrences of content lost "
          "(both runs, all seeds); * the site's best: safe, the highest recall")
    print(f"{'SHARE':>5} {'MIN':>3} | " + " ".join(f"{n:>13}" for n in mixed + similar))
    tops = {n: _top([summary_of(tallies, [n], s, m) for s, m in grid]) for n in mixed}
    for share, least in grid:
        cells = []
        for n in mixed + similar:
            r = summary_of(tallies, [n], share, least)
            mark = "*" if (share, least) in tops.get(n, ()) else " "
            extra = f" i{pct(r['shared_removed']).strip()}" if n in similar else (
                " h" if r["summary_final"] else "")
            cells.append(f"{pct(r['recall_main']).strip()}/{sum(r['lost'].values())}{extra}{mark}")
        print(f"{share:>5} {least:>3} | " + " ".join(f"{c:>13}" for c in cells))
    print("(h: the final counts remove the Summary heading; similar sites: i = % of the "
          "shared intro / description occurrences removed)")
    pick = best(rows)
    configured = (repeats.SHARE, repeats.MIN_PAGES)
    if pick is None:
        print("\nno setting keeps all the content")
        return False
    print(f"\npick: SHARE={pick['share']} MIN_PAGES={pick['min_pages']} (boilerplate recall "
          f"{pct(pick['recall_main']).strip()} %, template {pct(pick['template_body']).strip()}"
          f" %, Summary removed {pct(pick['summary_removed']).strip()} %); configured: "
          f"SHARE={configured[0]} MIN_PAGES={configured[1]}")
    if args.json:
        print(json.dumps({"pick": pick, "rows": rows}, indent=1, default=str))
    return (pick["share"], pick["min_pages"]) == configured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="shuffled crawl orders (20)")
    parser.add_argument("--batch", type=int, default=8, help="pages stored at a time after "
                        "the first (8: COLLECTION_HOST_CONCURRENCY's pages in flight)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    return 0 if report(measure(args), args) else 1


if __name__ == "__main__":
    sys.exit(main())
