"""A page's content as clean HTML and as markdown.

The main content comes as trafilatura's XML blocks (:func:`crawler.extract.text.main_blocks`);
:func:`blocks_html` writes them as plain HTML (headings, paragraphs, lists, tables, code with its
language, quotes, emphasis, links and images, absolute URLs; no attribute but ``href``,
``src``, ``alt``, ``title`` and a code block's ``class="language-x"``). Any other HTML (the
whole body, the elements a selector chose) is cleaned by :func:`clean_html` with
``lxml_html_clean``. Markdown is converted from that HTML by one library
(:data:`CONVERTER`, chosen by measurement: docs/benchmarks.md, Markdown quality), so every
way of choosing the content gives the same markdown for the same HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import html_to_markdown
from lxml import etree
from lxml.etree import _Element
from lxml.html import HtmlElement, fragment_fromstring, tostring
from lxml_html_clean import Cleaner

from crawler.extract.links import link_url
from crawler.extract.text import CODE_MARK

#: trafilatura's inline formatting (``hi rend``) → the HTML element.
_HI = {"#b": "strong", "#i": "em", "#u": "u", "#t": "code", "#sub": "sub", "#sup": "sup"}
#: Elements within which a ``code`` is inline code, not a block.
_INLINE_CONTEXT = {"p", "head", "item", "cell", "hi", "ref", "quote"}
_LANGUAGE_MARK = re.compile(f"^{CODE_MARK}([^{CODE_MARK}]*){CODE_MARK}")
_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_TAG_OPEN = re.compile(r"(?<!\]\()(?<!\\)<(?=[A-Za-z/!?])")
#: Stands for a table kept as HTML while the rest is converted (a private-use character).
_TABLE_MARK = "\ue001"
#: Attributes clean HTML keeps (``class`` only for a code block's language).
_KEPT_ATTRIBUTES = frozenset({"href", "src", "alt", "title", "colspan", "rowspan", "class"})


def blocks_html(blocks: Iterable[_Element], base: str) -> str:
    """trafilatura's XML ``blocks`` written as plain HTML; links and images resolved against
    ``base`` (only http(s) kept: a ``javascript:`` link is its text)."""
    return "\n".join(tostring(_html(block, base), encoding="unicode", method="html")
                     for block in blocks)


def _html(element: _Element, base: str) -> HtmlElement:
    tag, attributes = _html_tag(element, base)
    made = etree.Element(tag, attributes)
    text = element.text or ""
    if element.tag == "code":
        text = _LANGUAGE_MARK.sub("", text)
    if tag == "pre":  # a code block: its text in a <code> of the language
        code = etree.SubElement(made, "code", _language_class(element.text or ""))
        code.text = text
        return made  # type: ignore[return-value]
    made.text = text
    for child in element:
        made.append(_html(child, base))
    made.tail = element.tail
    return made  # type: ignore[return-value]


def _html_tag(element: _Element, base: str) -> tuple[str, dict[str, str]]:
    tag, rend = element.tag, element.get("rend") or ""
    if tag == "head":
        return (rend if re.fullmatch(r"h[1-6]", rend) else "h2"), {}
    if tag == "list":
        return ("ol" if rend == "ol" else "dl" if rend == "dl" else "ul"), {}
    if tag == "item":
        return (rend[:2] if rend[:2] in ("dt", "dd") else "li"), {}
    if tag == "hi":
        return _HI.get(rend, "span"), {}
    if tag == "code":
        parent = element.getparent()
        inline = (parent is not None and parent.tag in _INLINE_CONTEXT
                  and "\n" not in (element.text or "") and not _LANGUAGE_MARK.match(
                      element.text or ""))
        return ("code" if inline else "pre"), {}
    if tag == "ref":
        url = link_url(base, element.get("target"))
        return ("a", {"href": url}) if url else ("span", {})
    if tag == "graphic":
        src = link_url(base, element.get("src"))
        if not src:
            return "span", {}
        return "img", {key: value for key, value in (
            ("src", src), ("alt", element.get("alt") or ""), ("title", element.get("title")))
            if value is not None}
    simple = {"p": "p", "quote": "blockquote", "lb": "br", "del": "del", "table": "table",
              "row": "tr"}
    if tag == "cell":
        return ("th" if element.get("role") == "head" else "td"), {}
    return simple.get(tag, "div" if len(element) else "span"), {}


def _language_class(text: str) -> dict[str, str]:
    match = _LANGUAGE_MARK.match(text)
    return {"class": f"language-{match.group(1)}"} if match and match.group(1) else {}


_CLEANER = Cleaner(scripts=True, javascript=True, comments=True, style=True, inline_style=True,
                   links=True, meta=True, page_structure=False, processing_instructions=True,
                   embedded=True, frames=True, forms=True, annoying_tags=True,
                   remove_unknown_tags=False, safe_attrs_only=True,
                   safe_attrs=_KEPT_ATTRIBUTES)


def clean_html(elements: Iterable[HtmlElement], base: str) -> str:
    """``elements`` (copies of a page's) as clean HTML: without scripts, styles, forms,
    frames, comments, event handlers or any attribute but :data:`_KEPT_ATTRIBUTES`; links and
    images absolute (http(s) only: anything else is dropped, its text kept)."""
    parts: list[str] = []
    for element in elements:
        cleaned = _CLEANER.clean_html(element)
        for anchor in cleaned.iter("a"):
            _absolute(anchor, "href", base)
        for image in cleaned.iter("img"):
            _absolute(image, "src", base)
        for node in cleaned.iter():
            classes = node.get("class")
            if classes is not None and not (node.tag in ("code", "pre")
                                           and "language-" in classes):
                del node.attrib["class"]
        if cleaned.tag == "body":  # its content, not a second <body>
            parts.append((cleaned.text or "") + "".join(
                tostring(child, encoding="unicode", method="html") for child in cleaned))
        else:
            parts.append(tostring(cleaned, encoding="unicode", method="html"))
    return "\n".join(part.strip() for part in parts)


def _absolute(element: HtmlElement, attribute: str, base: str) -> None:
    url = link_url(base, element.get(attribute))
    if url:
        element.set(attribute, url)
    elif attribute in element.attrib:
        del element.attrib[attribute]


def _html_to_markdown(html: str) -> str:
    return html_to_markdown.convert(html, _OPTIONS).content or ""


_OPTIONS = html_to_markdown.ConversionOptions(
    heading_style="atx", bullets="-", strong_em_symbol="*", code_block_style="backticks",
    newline_style="backslash",  # a <br> as "\\" at the line's end: trailing spaces get lost
    extract_metadata=False, autolinks=False, url_escape_style="angle",
    # the content is chosen before conversion: a whole body keeps its navigation
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=False))

#: html → markdown, by the library that does it (the benchmark tries each).
CONVERTERS: dict[str, Callable[[str], str]] = {"html_to_markdown": _html_to_markdown}
CONVERTER = "html_to_markdown"


def markdown(html: str, title: str | None = None,
             converter: Callable[[str], str] | None = None, *, tables_as_html: bool = True
             ) -> str:
    """``html`` as markdown: ATX headings, ``-`` lists, GFM pipe tables (a table too
    irregular for pipes as HTML, unless not ``tables_as_html``), fenced code with its
    language, ``[text](url)`` links, ``![alt](url)`` images; no runs of blank lines. ``title``
    is written first as a heading unless the content has it as a heading already."""
    html, kept = _irregular_tables(html) if tables_as_html else (html, [])
    text = _escaped_tags((converter or CONVERTERS[CONVERTER])(html))
    for index, table in enumerate(kept):
        text = text.replace(f"{_TABLE_MARK}{index}{_TABLE_MARK}", f"\n\n{table}\n\n")
    text = _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()
    if title and not _has_heading(text, title):
        text = f"# {title}\n\n{text}" if text else f"# {title}"
    return text


def _escaped_tags(markdown_text: str) -> str:
    """The text's ``<`` that would open an HTML tag (``<The Palace>`` written in a page's
    text) escaped: a markdown renderer would read a tag and show nothing. Code spans and
    blocks, and link destinations in angle brackets, are left as they are."""
    if "<" not in markdown_text:
        return markdown_text
    lines, in_code = [], False
    for line in markdown_text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code:
            parts = line.split("`")
            parts[::2] = [_TAG_OPEN.sub(r"\\<", part) for part in parts[::2]]
            line = "`".join(parts)
        lines.append(line)
    return "\n".join(lines)


def _irregular_tables(html: str) -> tuple[str, list[str]]:
    """``html`` with each table too irregular for a pipe table (a cell spanning rows, a
    table or a list or several paragraphs in a cell) replaced by a mark, and those tables'
    HTML: markdown keeps them as HTML (GFM allows it), where pipes would scramble them."""
    if "<table" not in html:
        return html, []
    holder = fragment_fromstring(html, create_parent="div")
    kept: list[str] = []
    for table in list(holder.iter("table")):
        if table.getparent() is None or any(
                ancestor.tag == "table" for ancestor in table.iterancestors()):
            continue
        if not _irregular(table):
            continue
        mark = etree.Element("p")
        mark.text = f"{_TABLE_MARK}{len(kept)}{_TABLE_MARK}"
        mark.tail = table.tail
        table.tail = None
        kept.append(tostring(table, encoding="unicode", method="html").strip())
        table.getparent().replace(table, mark)
    if not kept:
        return html, []
    inner = (holder.text or "") + "".join(
        tostring(child, encoding="unicode", method="html") for child in holder)
    return inner, kept


def _irregular(table: HtmlElement) -> bool:
    for cell in table.iter("td", "th"):
        if cell.get("rowspan") not in (None, "1"):
            return True
        blocks = [child for child in cell.iter("table", "ul", "ol", "p", "pre", "blockquote")
                  if child is not cell]
        if any(block.tag != "p" for block in blocks) or len(blocks) > 1:
            return True
    return False


def _has_heading(text: str, title: str) -> bool:
    """Whether the content has the title as a heading, or starts with it (a heading read
    as a paragraph)."""
    wanted = " ".join(title.split()).casefold()
    first = text.lstrip().split("\n", 1)[0]
    return any(" ".join(heading.split()).casefold() == wanted
               for heading in [*_HEADING.findall(text), first])


_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\((?:<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_HEADING_MARK = re.compile(r"^#{1,6}\s+", re.MULTILINE)
_QUOTE = re.compile(r"^(?:>\s?)+", re.MULTILINE)
_FENCE = re.compile(r"^(?:```|~~~).*$\n?", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")
_HARD_BREAK = re.compile(r"\\$", re.MULTILINE)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_RULE = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*$\n?", re.MULTILINE)


def plain_text(markdown_text: str) -> str:
    """Markdown as the text a reader sees: links as their text, images gone, no heading,
    quote or emphasis marks, no code fences, no table rules; list markers and table pipes
    stay (the text format writes them too); paragraphs separated by one blank line."""
    text = _IMAGE.sub("", markdown_text)
    text = _LINK.sub(lambda match: match.group(1).replace("\\[", "[").replace("\\]", "]"),
                     text)
    text = _FENCE.sub("", _RULE.sub("", text))
    text = _QUOTE.sub("", _HEADING_MARK.sub("", text))
    text = _ESCAPE.sub(r"\1", _EMPHASIS.sub(r"\2", _HARD_BREAK.sub("", text)))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n\n".join(line for line in lines if line)
