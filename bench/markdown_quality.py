"""Markdown quality and cost on the shared article set: our converters, trafilatura's, Crawl4AI's.

    python bench/markdown_quality.py [--repeat N] [--crawl4ai-python PATH] [--dump DIR] [--verbose]

One run, all 181 pages of ``../shared/data/article-extraction-benchmark``, in process and
sequential. Candidates:

- ``text``: ``crawler.extract.content.main_content(page).text``, the readable text;
- ``ours:default``: ``main_content(page).markdown(None)``, what the API serves (no title: the
  ground truth has none);
- ``ours:NAME``: the same content's clean HTML (``Content.html``) through
  ``crawler.extract.markup.markdown(html, converter=...)`` with each library in
  ``markup.CONVERTERS`` and the candidates this script adds (:func:`candidate_converters`:
  markdownify, html2text, set up as alike as their options allow: ATX headings, ``-`` bullets,
  ``*`` emphasis, fenced code, no wrapping); a library that is not installed is left out
  (``.venv/bin/pip install markdownify html2text``; the project itself does not depend on
  them); ``ours:html_to_markdown+escape_misc`` is the project's settings with the library's
  ``escape_misc`` on (text such as ``<The Palace: Tale>`` is otherwise left as raw HTML, which
  a renderer hides); ``ours:trafilatura`` is trafilatura's own markdown writer (``xmltotxt`` with
  formatting) on the same XML blocks the text comes from;
- ``trafilatura``: trafilatura's own markdown of the raw page, the issue's call
  (``output_format="markdown"``, formatting, links, tables, favor_precision); and
  ``trafilatura-nc`` the same with ``include_comments=False`` as our text has it;
- ``crawl4ai``: Crawl4AI's ``fit_markdown`` (``DefaultMarkdownGenerator`` with
  ``PruningContentFilter``, no browser) on the same HTML, run by ``bench/crawl4ai_markdown.py``
  with Crawl4AI's own venv (``--crawl4ai-python``, default ``../venv-crawl4ai``; made once
  with ``python3 -m venv ../venv-crawl4ai && ../venv-crawl4ai/bin/pip install crawl4ai``),
  before the in-process part so the two never share the CPU.

Quality: each markdown reduced to plain text (:func:`strip_markdown`) and scored against the
ground truth with ``../shared/tools/quality.py``'s own functions (imported, not copied), as
``bench/article_quality_inprocess.py`` scores the text.

Cost: per page, a fresh ``FetchedPage`` each time, the text alone (``main_content(page).text``)
against text and markdown (``.text`` then ``.markdown(...)``), in turns; "over text" is the
median over pages of the difference, "md step" the median time of the ``markdown()`` call
alone. trafilatura's and Crawl4AI's times are their whole run from the raw HTML (Crawl4AI's in
its own process). With ``--repeat N`` each time is the page's fastest of N.

Structure: on the 20 pages of ``bench/markdown_structure_labels.json`` (written with
``bench/label_markdown_structure.py``), the headings, list items, table cells and links found in
each markdown (:func:`count_markdown`) against the labelled counts of the article's main
content: "kept" is sum over pages of min(found, truth) / sum of truth, "extra" the sum of what
was found beyond the truth / sum of truth (over-generation: boilerplate links, a title).

Exit status 0 when ``ours:default`` meets the issue's bars: F1 ≥ 0.970 and ≥ the text's,
above trafilatura's and Crawl4AI's, and ≤ 3 ms over text at p50; 1 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import gzip
import html as html_lib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trafilatura
from lxml import etree
from trafilatura.xml import xmltotxt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import shared_tools  # noqa: E402
from bench.shared_tools import load_quality  # noqa: E402
from crawler.extract import content, markup  # noqa: E402
from crawler.extract.fetched import FetchedPage  # noqa: E402
from crawler.extract.text import CODE_MARK  # noqa: E402

DATA = shared_tools.DATA / "article-extraction-benchmark"
LABELS = Path(__file__).resolve().parent / "markdown_structure_labels.json"
#: Crawl4AI's own venv, beside the checkout (``../venv-crawl4ai``).
CRAWL4AI_PYTHON = ROOT.parent / "venv-crawl4ai" / "bin" / "python"
CRAWL4AI_RUNNER = Path(__file__).resolve().parent / "crawl4ai_markdown.py"
KINDS = ("headings", "list_items", "table_cells", "links")
BAR_F1, BAR_OVER_MS = 0.970, 3.0

#: The issue's call for trafilatura's own markdown.
TRAFILATURA_MARKDOWN = {"output_format": "markdown", "include_formatting": True,
                        "include_links": True, "favor_precision": True, "include_tables": True}

# -- markdown to plain text --------------------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: A link's or image's destination: no spaces, one level of parentheses, an optional title.
_DEST = r"\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
#: A link's text: one level of brackets inside, line breaks but no blank line.
_LABEL = r"\[((?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]]*\])*)\]"
_IMAGE = re.compile(r"!" + _LABEL + "(?:" + _DEST + r"|\[[^\]]*\])")
_LINK = re.compile(_LABEL + "(?:" + _DEST + r"|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>", re.IGNORECASE)
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S+.*$", re.MULTILINE)
_IMG_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
#: Raw HTML as CommonMark reads it (a renderer shows none of it): an open tag with its
#: attributes, a closing tag, a comment. ``<The Palace: Tale>`` is one (tag "The", attributes
#: "Palace:", "Tale"), ``1 < 2`` and ``<3`` are not.
_TAG = re.compile(r"(?<!\\)(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*"
                  r"(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
                  r"|</[A-Za-z][A-Za-z0-9-]*\s*>|<!--.*?-->)", re.DOTALL)
_ATX = re.compile(r"^ {0,3}#{1,6}(?=\s|$)[ \t]*(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^(?:[ \t]*>)+[ \t]?")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")
_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_EMPHASIS = (re.compile(r"(?<![\w\\])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"),
             re.compile(r"(?<!\\)(\*{1,3})(?=\S)(.+?)(?<=\S)(?<!\\)\1"),
             re.compile(r"(?<!\\)~~(?=\S)(.+?)(?<=\S)~~"))
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def strip_markdown(markdown: str) -> str:
    """Markdown reduced to its words: markup removed, link text kept without the URL, images
    dropped whole (alt text too), table pipes and delimiter rows, code fences, heading and
    list markers, quote marks, emphasis, inline HTML tags and escapes gone."""
    lines: list[str] = []
    previous = ""
    for code, block in _blocks(markdown):
        if code:
            lines.extend(block.splitlines())
            previous = ""
            continue
        block = _TAG.sub(" ", _links_to_text(_REF_DEF.sub("", block)))
        for line in block.splitlines():
            if _RULE.match(line) or (_DELIMITER.match(line) and "-" in line):
                previous = ""
                continue
            if _SETEXT.match(line) and previous.strip():
                continue
            previous = line
            line = _QUOTE.sub("", line)
            heading = _ATX.match(line)
            line = heading.group(1) if heading else _BULLET.sub("", line)
            lines.append(_inline(line))
    return "\n".join(lines)


def _blocks(markdown: str) -> list[tuple[bool, str]]:
    """The markdown in runs of lines: (True, a fenced code block's content) or (False, the
    text between code blocks); the fence lines themselves are left out."""
    runs: list[tuple[bool, list[str]]] = [(False, [])]
    fenced = False
    for line in (markdown or "").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            runs.append((fenced, []))
            continue
        runs[-1][1].append(line)
    return [(code, "\n".join(lines)) for code, lines in runs if lines]


def _links_to_text(text: str) -> str:
    """Images gone (alt text too), links as their text (a link may span lines)."""
    text = _IMG_TAG.sub(" ", _IMAGE.sub(" ", text))
    while True:  # [[x](a)](b): the inner link first
        replaced = _LINK.sub(lambda m: m.group(1), text)
        if replaced == text:
            return _AUTOLINK.sub(lambda m: m.group(1), text)
        text = replaced


def _inline(line: str) -> str:
    """One line without inline markup: links, code spans, emphasis, HTML, pipes, escapes."""
    line = _links_to_text(line)
    line = _CODE_SPAN.sub(lambda m: m.group(2), line)
    for pattern in _EMPHASIS:
        line = pattern.sub(lambda m: m.group(m.lastindex), line)
    line = _TAG.sub(" ", line).replace("|", " ")
    return html_lib.unescape(_ESCAPE.sub(r"\1", line))


# -- structure in markdown ---------------------------------------------------------------------

_HTML_HEADING = re.compile(r"<h[1-6]\b", re.IGNORECASE)
_HTML_ITEM = re.compile(r"<li\b", re.IGNORECASE)
_HTML_CELL = re.compile(r"<t([dh])\b[^>]*>(.*?)</t\1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_LINK = re.compile(r"<a\b[^>]*\bhref\s*=[^>]*>(.*?)</a\s*>", re.IGNORECASE | re.DOTALL)
_WORD = re.compile(r"\w")
_PIPE = re.compile(r"(?<!\\)\|")
_PIPED = re.compile(r"^[ \t]*\|.*\|[ \t]*$")


def count_markdown(markdown: str) -> dict[str, int]:
    """Headings (ATX and setext), list item lines, table cells with words (pipe rows, or HTML
    cells) and links with words in their text (inline, reference, autolinks, HTML
    ``<a href>``); nothing inside code fences."""
    counts = dict.fromkeys(KINDS, 0)
    plain: list[str] = []
    fenced = False
    for line in (markdown or "").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            plain.append("")
        else:
            plain.append("" if fenced else line)
    in_table = _table_rows(plain)
    previous = ""
    for number, line in enumerate(plain):
        body = _QUOTE.sub("", line)
        if in_table[number]:
            if not _DELIMITER.match(body):
                cells = _PIPE.split(body.strip())
                counts["table_cells"] += sum(1 for cell in cells if _WORD.search(_inline(cell)))
        elif _heading(body, previous):
            counts["headings"] += 1
        elif _BULLET.match(body) and not _RULE.match(body):
            counts["list_items"] += 1
        previous = body if body.strip() else ""
    text = "\n".join(plain)
    counts["headings"] += len(_HTML_HEADING.findall(text))
    counts["list_items"] += len(_HTML_ITEM.findall(text))
    counts["table_cells"] += sum(1 for m in _HTML_CELL.finditer(text)
                                 if _WORD.search(_inline(m.group(2))))
    counts["links"] += _count_links(_HTML_CELL.sub(" ", text))
    counts["links"] += sum(1 for m in _HTML_LINK.finditer(text)
                           if _WORD.search(_inline(m.group(1))))
    return counts


def _heading(line: str, previous: str) -> bool:
    """An ATX heading with words, or the underline of a setext one below a line of words."""
    atx = _ATX.match(line)
    if atx:
        return bool(_WORD.search(atx.group(1)))
    return bool(_SETEXT.match(line) and _WORD.search(previous) and not _BULLET.match(previous)
                and not _ATX.match(previous))


def _table_rows(lines: list[str]) -> list[bool]:
    """Which lines are rows of a pipe table: a delimiter row, the row above it and the rows
    with a pipe below it; and two or more lines in a row that start and end with a pipe
    (trafilatura writes its tables without a delimiter row)."""
    rows = [False] * len(lines)
    piped = [bool(_PIPED.match(line)) for line in lines]
    for number, is_piped in enumerate(piped):
        if is_piped and ((number and piped[number - 1])
                         or (number + 1 < len(lines) and piped[number + 1])):
            rows[number] = True
    for number, line in enumerate(lines):
        if not (_DELIMITER.match(_QUOTE.sub("", line)) and "|" in line and "-" in line):
            continue
        if number and "|" in lines[number - 1]:
            rows[number - 1] = True
        rows[number] = True
        below = number + 1
        while below < len(lines) and "|" in lines[below] and lines[below].strip():
            rows[below] = True
            below += 1
    return rows


def _count_links(text: str) -> int:
    """Links with words in their text (a link may span lines); image-only links are not."""
    text = _IMG_TAG.sub(" ", _IMAGE.sub(" ", text))
    found = len(_AUTOLINK.findall(text))
    while True:  # the inner link of [[x](a)](b) first
        matches = list(_LINK.finditer(text))
        if not matches:
            return found
        found += sum(1 for m in matches if _WORD.search(_inline(m.group(1))))
        text = _LINK.sub(" ", text)


# -- the run -----------------------------------------------------------------------------------


#: How ours() makes the markdown: None Content.markdown, "trafilatura" its writer, or a library.
Converter = Callable[[str], str] | str | None


@dataclass
class Candidate:
    name: str
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)   # whole run, per page
    over: dict[str, float] = field(default_factory=dict)      # total - text alone, per page
    step: dict[str, float] = field(default_factory=dict)      # the markdown call alone
    markdown: bool = True


def candidate_converters() -> dict[str, Callable[[str], str]]:
    """html → markdown by each library: the project's (``markup.CONVERTERS``) and the others
    measured against it, when installed."""
    converters = dict(markup.CONVERTERS)
    project_options = getattr(markup, "_OPTIONS", None)
    if project_options is not None:  # the project's html-to-markdown settings, text escaped
        import html_to_markdown

        escaping = dataclasses.replace(project_options, escape_misc=True)
        converters["html_to_markdown+escape_misc"] = (
            lambda html: html_to_markdown.convert(html, escaping).content or "")
    try:
        import markdownify
    except ImportError:
        print("markdownify not installed: left out")
    else:
        def language(element) -> str | None:  # <pre><code class="language-x">
            code = element.find("code")
            for name in ((code.get("class") or []) if code is not None else []):
                if name.startswith("language-"):
                    return name.removeprefix("language-")
            return None

        options = {"heading_style": "ATX", "bullets": "-", "strong_em_symbol": "*",
                   "code_language_callback": language, "bs4_options": "lxml",
                   "table_infer_header": True}
        converters.setdefault("markdownify",
                              lambda html: markdownify.markdownify(html, **options))
    try:
        import html2text
    except ImportError:
        print("html2text not installed: left out")
    else:
        def with_html2text(html: str) -> str:
            converter = html2text.HTML2Text()
            converter.body_width = 0
            converter.unicode_snob = True
            converter.ul_item_mark = "-"
            converter.emphasis_mark = "*"
            converter.backquote_code_style = True
            converter.skip_internal_links = False
            return converter.handle(html)

        converters.setdefault("html2text", with_html2text)
    return converters


_CODE_LANGUAGE = re.compile(f"^{CODE_MARK}[^{CODE_MARK}]*{CODE_MARK}")


def trafilatura_writer(found: content.Content) -> str:
    """trafilatura's own markdown of the same XML blocks (its ``xmltotxt`` with formatting);
    a page without blocks (a list of links) as ``Content.markdown`` writes it."""
    if not found.blocks:
        return found.markdown(None) or ""
    body = etree.Element("body")
    body.extend(copy.deepcopy(block) for block in found.blocks)
    for code in body.iter("code"):
        code.text = _CODE_LANGUAGE.sub("", code.text or "")
    return xmltotxt(body, include_formatting=True)


def ours(page: FetchedPage, converter: Converter) -> tuple[str, float, float]:
    """(markdown, seconds for text and markdown, seconds for the markdown step alone);
    ``converter`` None is ``Content.markdown``, "trafilatura" trafilatura's writer."""
    started = time.perf_counter()
    found = content.main_content(page)
    _ = found.text
    middle = time.perf_counter()
    if converter is None:
        markdown = found.markdown(None)
    elif converter == "trafilatura":
        markdown = trafilatura_writer(found)
    elif found.blocks or found.elements:
        markdown = markup.markdown(found.html or "", None, converter=converter)
    else:  # a page of links: its list, whatever the converter
        markdown = found.markdown(None)
    ended = time.perf_counter()
    return markdown or "", ended - started, ended - middle


def text_alone(page: FetchedPage) -> tuple[str, float]:
    started = time.perf_counter()
    text = content.main_content(page).text
    return text or "", time.perf_counter() - started


def trafilatura_markdown(html: str, url: str, **extra: bool) -> tuple[str, float]:
    started = time.perf_counter()
    markdown = trafilatura.extract(html, url=url, **TRAFILATURA_MARKDOWN, **extra)
    return markdown or "", time.perf_counter() - started


def run_crawl4ai(python: Path, data: Path) -> dict[str, dict[str, object]] | None:
    if not python.exists():
        print(f"crawl4ai: no {python}; make it with: python3 -m venv {python.parent.parent} && "
              f"{python.parent}/pip install crawl4ai   (the crawl4ai row is left out)")
        return None
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "crawl4ai.json"
        subprocess.run([str(python), "-W", "ignore::DeprecationWarning", str(CRAWL4AI_RUNNER),
                        "--data", str(data), "--out", str(out)], check=True)
        results = json.loads(out.read_text(encoding="utf-8"))
    print(f"crawl4ai {results['version']} (its own venv: {python})")
    return results["pages"]


def score(quality, truth: dict[str, dict], outputs: dict[str, str]) -> tuple[float, float, float]:
    """Precision, recall, F1 aggregated exactly as quality.articles() does."""
    scores = [quality.page_scores(truth[p].get("articleBody", ""), outputs.get(p, ""))
              for p in sorted(truth)]
    precisions = [quality.ratio(tp, fp, fn) for tp, fp, fn in scores if tp + fp > 0]
    recalls = [quality.ratio(tp, fn, fp) for tp, fp, fn in scores if tp + fn > 0]
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    return p, r, shared_tools.f1(p, r)


def structure(labels: dict[str, dict], outputs: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Per kind: (kept, extra) as shares of the labelled total."""
    shares = {}
    for kind in KINDS:
        truth = kept = extra = 0
        for page_id, label in labels.items():
            found = count_markdown(outputs.get(page_id, ""))[kind]
            truth += label[kind]
            kept += min(found, label[kind])
            extra += max(0, found - label[kind])
        shares[kind] = (kept / truth, extra / truth) if truth else (0.0, 0.0)
    return shares


def median_ms(values: dict[str, float]) -> float | None:
    return statistics.median(values.values()) * 1000 if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--quality", type=Path, default=shared_tools.QUALITY)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--crawl4ai-python", type=Path, default=CRAWL4AI_PYTHON)
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each page N times, keep the fastest")
    parser.add_argument("--dump", type=Path, help="write every candidate's output here")
    parser.add_argument("--verbose", action="store_true", help="list pages where markdown loses")
    args = parser.parse_args()

    quality = load_quality(args.quality)
    truth = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    labels = json.loads(args.labels.read_text(encoding="utf-8"))
    crawl4ai = run_crawl4ai(args.crawl4ai_python, args.data)

    converters: list[tuple[str, Converter]] = [("ours:default", None)]
    converters += [(f"ours:{name}", fn) for name, fn in candidate_converters().items()]
    converters.append(("ours:trafilatura", "trafilatura"))
    text = Candidate("text", markdown=False)
    candidates = {name: Candidate(name) for name, _ in converters}
    candidates["trafilatura"] = Candidate("trafilatura")
    candidates["trafilatura-nc"] = Candidate("trafilatura-nc")

    pages = sorted(truth)
    htmls = {p: gzip.decompress((args.data / "html" / f"{p}.html.gz").read_bytes()).decode(
        "utf-8", errors="replace") for p in pages}
    url = "http://127.0.0.1/{}".format
    for page_id in pages[:3]:  # warm up: imports, caches, first-call costs
        text_alone(FetchedPage.from_html(url(page_id), htmls[page_id]))
        for _, converter in converters:
            ours(FetchedPage.from_html(url(page_id), htmls[page_id]), converter)

    for index, page_id in enumerate(pages):
        html = htmls[page_id]
        jobs: list[Callable[[], None]] = []

        def time_text(page_id: str = page_id, html: str = html) -> None:
            out, seconds = text_alone(FetchedPage.from_html(url(page_id), html))
            text.outputs[page_id] = out
            text.seconds[page_id] = min(seconds, text.seconds.get(page_id, seconds))

        jobs.append(time_text)
        for name, converter in converters:
            def time_ours(name: str = name, converter: Converter = converter,
                          page_id: str = page_id, html: str = html) -> None:
                out, seconds, step = ours(FetchedPage.from_html(url(page_id), html), converter)
                found = candidates[name]
                found.outputs[page_id] = out
                found.seconds[page_id] = min(seconds, found.seconds.get(page_id, seconds))
                found.step[page_id] = min(step, found.step.get(page_id, step))
            jobs.append(time_ours)
        for name, extra in (("trafilatura", {}), ("trafilatura-nc", {"include_comments": False})):
            def time_trafilatura(name: str = name, extra: dict = extra, page_id: str = page_id,
                                 html: str = html) -> None:
                out, seconds = trafilatura_markdown(html, url(page_id), **extra)
                found = candidates[name]
                found.outputs[page_id] = out
                found.seconds[page_id] = min(seconds, found.seconds.get(page_id, seconds))
            jobs.append(time_trafilatura)
        for turn in range(args.repeat):
            shift = (index + turn) % len(jobs)  # each candidate takes every place in turn
            for job in jobs[shift:] + jobs[:shift]:
                job()
    for candidate in candidates.values():
        if candidate.name.startswith("ours:"):
            candidate.over = {p: candidate.seconds[p] - text.seconds[p] for p in pages}
    if crawl4ai is not None:
        found = candidates["crawl4ai"] = Candidate("crawl4ai")
        for page_id in pages:
            found.outputs[page_id] = str(crawl4ai[page_id]["markdown"])
            found.seconds[page_id] = float(crawl4ai[page_id]["seconds"])

    if args.dump:
        for candidate in [text, *candidates.values()]:
            folder = args.dump / candidate.name.replace(":", "-")
            folder.mkdir(parents=True, exist_ok=True)
            for page_id, out in candidate.outputs.items():
                (folder / f"{page_id}.md").write_text(out, encoding="utf-8")

    label_totals = {k: sum(label[k] for label in labels.values()) for k in KINDS}
    print(f"pages={len(pages)} repeat={args.repeat}; structure on {len(labels)} labelled pages: "
          + ", ".join(f"{k} {v}" for k, v in label_totals.items()))
    print("structure: kept share (+extra share) of the labelled headings, list items, "
          "table cells, links")
    header = (f"{'candidate':<33} {'F1':>6} {'P':>6} {'R':>6} {'p50 ms':>7} {'over text':>9} "
              f"{'md step':>7}  " + "  ".join(f"{k:>13}" for k in KINDS))
    print(header)
    print("-" * len(header))
    results: dict[str, float] = {}
    for candidate in [text, *candidates.values()]:
        plain = ({p: strip_markdown(m) for p, m in candidate.outputs.items()}
                 if candidate.markdown else candidate.outputs)
        p, r, f1 = score(quality, truth, plain)
        results[candidate.name] = f1
        over, step = median_ms(candidate.over), median_ms(candidate.step)
        shares = structure(labels, candidate.outputs) if candidate.markdown else None
        kinds = ("  ".join(f"{kept:>5.2f} (+{extra:.2f})" for kept, extra in shares.values())
                 if shares else "")
        print(f"{candidate.name:<33} {f1:>6.4f} {p:>6.4f} {r:>6.4f} "
              f"{median_ms(candidate.seconds):>7.1f} "
              f"{'' if over is None else f'{over:+.2f}':>9} "
              f"{'' if step is None else f'{step:.2f}':>7}  {kinds}")
        if args.verbose and candidate.markdown and candidate.name.startswith("ours:"):
            for page_id in pages:
                mine = quality.page_scores(truth[page_id]["articleBody"], plain[page_id])
                base = quality.page_scores(truth[page_id]["articleBody"], text.outputs[page_id])
                if mine[0] < base[0] - 0.02:
                    print(f"    {page_id[:12]} tp {mine[0]:.3f} < text's {base[0]:.3f}")

    default = candidates["ours:default"]
    over = median_ms(default.over) or 0.0
    bars = {
        f"F1 >= {BAR_F1}": results["ours:default"] >= BAR_F1,
        "F1 >= text's": results["ours:default"] >= results["text"],
        "F1 > trafilatura's": results["ours:default"] > results["trafilatura"],
        "F1 > crawl4ai's": "crawl4ai" in results and results["ours:default"] > results["crawl4ai"],
        f"over text p50 <= {BAR_OVER_MS} ms": over <= BAR_OVER_MS,
    }
    print("ours:default " + ", ".join(f"{bar} {'PASS' if ok else 'FAIL'}"
                                      for bar, ok in bars.items()))
    return 0 if all(bars.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
