"""Label the structure of articles' main content: the helper behind markdown_structure_labels.json.

    python bench/label_markdown_structure.py suggest [--top 40]   # candidates, main element found
    python bench/label_markdown_structure.py count                # recount the labels' selectors

``bench/markdown_quality.py`` compares the headings, list items, table cells and links of each
candidate's markdown with the same constructs in the article's main content in the original
HTML. The labels (``bench/markdown_structure_labels.json``) say, per page, which element is the
main content (a CSS selector matching one element) and how many of each construct it holds.

``suggest`` finds, on every page of the shared article set, the element whose text is closest
to the hand-written article body (4-token shingles, best F1; the deepest on a tie), writes a
selector for it and counts its constructs, then lists the pages with the most structure. A
person picks the pages, checks the element in the HTML and writes (or corrects) the selector in
the labels file; ``count`` then recomputes every page's counts from its selector, so the
numbers are always what the selector says.

What is counted inside the main element (``count_structure``): ``h1`` to ``h6``, ``li``,
``td``/``th`` and ``a[href]`` (not ``javascript:``) that have text, outside scripts, styles,
templates, ``noscript`` and elements hidden by the ``hidden`` attribute or an inline
``display:none``, and whose text belongs to the article: found in the ground-truth body (the
body's shingles hold 80 % of the element's; for fewer than four tokens, the tokens in a row,
and the same of the nearest enclosing block of four tokens or more: a pagination link "2" or a
share list's "More" is not the article's).
That last rule keeps out what sits inside the article's container but is not the article (share
buttons, "related" lists, ads), as the ground truth does. A heading, an item or a link is
counted once however deep it is nested; a list item holding a nested list counts, as do the
nested items.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

import lxml.html
from lxml.html import HtmlElement

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import shared_tools  # noqa: E402

DATA = shared_tools.DATA / "article-extraction-benchmark"
LABELS = Path(__file__).resolve().parent / "markdown_structure_labels.json"
TOKEN = re.compile(r"\w+", re.UNICODE)
KINDS = ("headings", "list_items", "table_cells", "links")
_SKIP = {"script", "style", "template", "noscript", "head", "title", "svg"}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "div", "blockquote", "dd",
           "dt", "figcaption", "section", "article", "ul", "ol", "nav", "table", "tr", "pre"}
_CONTAINERS = {"article", "main", "div", "section", "td", "body", "span", "font", "center"}


def load_page(page_id: str, data: Path = DATA) -> HtmlElement:
    body = gzip.decompress((data / "html" / f"{page_id}.html.gz").read_bytes())
    return lxml.html.document_fromstring(body.decode("utf-8", errors="replace"))


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text or "")


def shingles(words: list[str], n: int = 4) -> Counter:
    return Counter(tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1))
                   if words[i:i + n])


def _shown(element: HtmlElement) -> bool:
    for node in element.iterancestors():
        if not _visible_self(node):
            return False
    return _visible_self(element)


def _visible_self(node: HtmlElement) -> bool:
    if not isinstance(node.tag, str) or node.tag in _SKIP:
        return False
    if node.get("hidden") is not None:
        return False
    return not _HIDDEN_STYLE.search(node.get("style") or "")


def visible_text(element: HtmlElement) -> str:
    """The element's text without scripts, styles and hidden elements."""
    parts: list[str] = []

    def walk(node: HtmlElement) -> None:
        if not _visible_self(node):
            return
        if node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return " ".join(parts)


class Truth:
    """The ground-truth article body, for asking whether a piece of text belongs to it."""

    def __init__(self, body: str) -> None:
        self.words = tokens(body)
        self.joined = " " + " ".join(w.lower() for w in self.words) + " "
        self.shingles = shingles([w.lower() for w in self.words])

    def holds(self, text: str) -> bool:
        words = [w.lower() for w in tokens(text)]
        if not words:
            return False
        if len(words) < 4:
            return " " + " ".join(words) + " " in self.joined
        own = shingles(words)
        return sum((own & self.shingles).values()) >= 0.8 * sum(own.values())


def count_structure(main: HtmlElement, truth: Truth) -> dict[str, int]:
    counts = dict.fromkeys(KINDS, 0)
    for element in main.iter():
        if not isinstance(element.tag, str):
            continue
        tag = element.tag.lower()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            kind = "headings"
        elif tag == "li":
            kind = "list_items"
        elif tag in ("td", "th"):
            kind = "table_cells"
        elif tag == "a" and element.get("href") and not element.get("href", "").strip(
                ).lower().startswith("javascript:"):
            kind = "links"
        else:
            continue
        if _shown(element) and _belongs(element, main, truth):
            counts[kind] += 1
    return counts


def _belongs(element: HtmlElement, main: HtmlElement, truth: Truth) -> bool:
    """The element's text is the article's; a short one (a link "2") read in its block."""
    text = visible_text(element)
    if not truth.holds(text):
        return False
    if len(tokens(text)) >= 4:
        return True
    for block in element.iterancestors():
        if block is main:
            return True
        if isinstance(block.tag, str) and block.tag.lower() in _BLOCKS:
            around = visible_text(block)
            if len(tokens(around)) >= 4:
                return truth.holds(around)
    return True


def selector_for(element: HtmlElement) -> str:
    """A CSS selector that matches this element alone in its document."""
    root = element.getroottree().getroot()

    def unique(selector: str) -> bool:
        try:
            found = root.cssselect(selector)
        except Exception:  # odd ids and classes cssselect cannot parse
            return False
        return len(found) == 1 and found[0] is element

    tag = element.tag.lower()
    ident = element.get("id")
    if ident and re.fullmatch(r"[A-Za-z][\w-]*", ident) and unique(f"{tag}#{ident}"):
        return f"{tag}#{ident}"
    classes = [c for c in (element.get("class") or "").split()
               if re.fullmatch(r"-?[A-Za-z_][\w-]*", c)]
    if classes:
        selector = tag + "".join(f".{c}" for c in classes)
        if unique(selector):
            return selector
        for c in classes:
            if unique(f"{tag}.{c}"):
                return f"{tag}.{c}"
    if tag in ("article", "main", "body") and unique(tag):
        return tag
    parent = element.getparent()
    if parent is None:
        return tag
    same = [s for s in parent if isinstance(s.tag, str) and s.tag.lower() == tag]
    step = f"{tag}:nth-of-type({same.index(element) + 1})" if len(same) > 1 else tag
    return f"{selector_for(parent)} > {step}"


def find_main(root: HtmlElement, truth: Truth) -> tuple[HtmlElement, float]:
    """The element whose visible text is closest to the ground truth (best shingle F1)."""
    best, best_f1, best_depth = root, -1.0, -1
    total = sum(truth.shingles.values())
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.lower() not in _CONTAINERS:
            continue
        own = shingles([w.lower() for w in tokens(visible_text(element))])
        size = sum(own.values())
        if not size or not total:
            continue
        tp = sum((own & truth.shingles).values())
        f1 = shared_tools.f1(tp / size, tp / total)
        depth = sum(1 for _ in element.iterancestors())
        if f1 > best_f1 + 1e-9 or (abs(f1 - best_f1) <= 1e-9 and depth > best_depth):
            best, best_f1, best_depth = element, f1, depth
    return best, best_f1


def suggest(args: argparse.Namespace) -> int:
    truth_all = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    rows = []
    for page_id in sorted(truth_all):
        truth = Truth(truth_all[page_id].get("articleBody", ""))
        root = load_page(page_id, args.data)
        main, f1 = find_main(root, truth)
        counts = count_structure(main, truth)
        kinds = sum(1 for k in KINDS if counts[k])
        rows.append((kinds, sum(counts.values()), page_id, selector_for(main), f1, counts))
    rows.sort(key=lambda row: (-row[0], -row[1]))
    for kinds, _, page_id, selector, f1, counts in rows[:args.top]:
        print(f"{page_id[:12]} kinds={kinds} f1={f1:.3f} {counts} {selector}")
    return 0


def count(args: argparse.Namespace) -> int:
    truth_all = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    labels = json.loads(args.labels.read_text(encoding="utf-8"))
    for page_id, label in labels.items():
        root = load_page(page_id, args.data)
        found = root.cssselect(label["main"])
        if len(found) != 1:
            raise SystemExit(f"{page_id}: {label['main']!r} matches {len(found)} elements")
        counts = count_structure(found[0], Truth(truth_all[page_id].get("articleBody", "")))
        changed = {k: (label.get(k), v) for k, v in counts.items() if label.get(k) != v}
        if changed:
            print(f"{page_id[:12]} {changed}")
        label.update(counts)
    args.labels.write_text(json.dumps(labels, indent=1) + "\n", encoding="utf-8")
    print(f"{len(labels)} pages; totals "
          + ", ".join(f"{k} {sum(v[k] for v in labels.values())}" for k in KINDS))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("suggest", "count"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    return suggest(args) if args.action == "suggest" else count(args)


if __name__ == "__main__":
    sys.exit(main())
