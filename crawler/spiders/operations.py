"""One spider for every page operation: ``scrapy crawl page|contacts|products -a url=…``.

A page operation's spider fetches its one page (:class:`~crawler.spiders.base.SinglePageSpider`)
and calls the extraction function bound to its name (:mod:`crawler.extract.registry`) with the
operation's options, taken from ``-a`` (:data:`core.operations.OPERATIONS` says which).
:func:`spider_class` gives each extraction's class: made here for the generic ones, found in
this package for the one with a spider of its own (``own_spider``: the video, which makes a
Data API request after its page). :class:`OperationSpiderLoader` (``SPIDER_LOADER_CLASS``) lists
them beside this package's other spiders, so ``scrapy crawl page`` and ``scrapy list`` know them.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from scrapy import Request, Spider
from scrapy.settings import BaseSettings
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.misc import walk_modules
from scrapy.utils.spider import iter_spider_classes

from core.operations import BY_EXTRACTION, EXTRACTIONS, Extraction, Option
from core.options import OptionError
from crawler.exceptions import CrawlError, InvalidOption
from crawler.extract.fetched import FetchedPage
from crawler.extract.registry import extractor
from crawler.spiders.base import SinglePageSpider


class OperationSpider(SinglePageSpider):
    """Fetches ``url`` and answers with its extraction's item; its options come from ``-a``
    (``-a include_links=false``, ``-a formats=markdown,html``) or a job's JSON values, checked
    by their kind's rule (:mod:`core.options`), the operation's defaults otherwise."""

    extraction: ClassVar[Extraction]

    def __init__(self, url: str | None = None, *args: Any, **kwargs: Any):
        given: dict[str, Any] = {}
        refusals: list[str] = []
        for option in self.extraction.options:
            if option.name in kwargs:
                try:
                    given[option.name] = _checked(option, kwargs.pop(option.name))
                except OptionError as exc:
                    entries = "".join(f" [{i}] {message}" for i, message in exc.errors.items())
                    refusals.append(f"{option.name}: {exc}{entries}")
        refusals += [f"{option.name}: required" for option in self.extraction.options
                     if option.required and given.get(option.name) is None]
        super().__init__(url, *args, **kwargs)
        self.options = self.extraction.option_values(given)
        self._refusal = "; ".join(refusals)

    def refused_url(self) -> CrawlError | None:
        """An option the API would refuse fails the page (``validation_error``, nothing
        fetched), in words naming it, like a URL it would refuse."""
        if self._refusal:
            return InvalidOption(f"Invalid option: {self._refusal}", url=self.url)
        return super().refused_url()

    def extract(self, page: FetchedPage) -> Any:
        return extractor(self.extraction.name)(page, **self.options)


def _checked(option: Option, value: Any) -> Any:
    """``value`` of ``option``: a ``-a`` string read as its kind reads one, then checked."""
    return option.kind.check(option.kind.from_text(value) if isinstance(value, str) else value)


@functools.cache
def spider_class(name: str) -> type[SinglePageSpider]:
    """The spider of extraction ``name`` (KeyError if there is none)."""
    extraction = EXTRACTIONS[name]
    if extraction.own_spider:
        for module in walk_modules(__package__):
            for spider in iter_spider_classes(module):
                if spider.name == name and issubclass(spider, SinglePageSpider):
                    return spider
        raise KeyError(f"No spider of this package is called {name!r}")
    operation = BY_EXTRACTION.get(name)
    what = (f"``POST {operation.path}``. {operation.summary}" if operation is not None
            else f"a collection's ``extract: {name}``.")
    return type(f"{extraction.title}Spider", (OperationSpider,), {
        "name": name, "extraction": extraction, "__module__": __name__,
        "__doc__": f"``scrapy crawl {name} -a url=…``: {what}"})


class OperationSpiderLoader:
    """Scrapy's spider loader (the spiders of ``SPIDER_MODULES``), and the page operations'
    generic spiders (:func:`spider_class`), through the loader interface Scrapy documents
    (``SPIDER_LOADER_CLASS``)."""

    def __init__(self, settings: BaseSettings):
        self._modules = SpiderLoader.from_settings(settings)
        self._operations = {name: spider_class(name) for name, extraction in EXTRACTIONS.items()
                            if not extraction.own_spider}

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> OperationSpiderLoader:
        return cls(settings)

    def load(self, spider_name: str) -> type[Spider]:
        found = self._operations.get(spider_name)
        return found if found is not None else self._modules.load(spider_name)

    def list(self) -> list[str]:
        return [*self._operations, *self._modules.list()]

    def find_by_request(self, request: Request) -> list[str]:
        return [*(name for name, spider in self._operations.items()
                  if spider.handles_request(request)),
                *self._modules.find_by_request(request)]
