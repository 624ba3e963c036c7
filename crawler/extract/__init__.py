"""Pure extraction functions: turn a fetched page into the item of an operation's answer.

One contract for every extractor (``extract_page``, ``extract_contacts``, ``extract_products``,
``extract_video``):

- **Input:** a :class:`~crawler.extract.fetched.FetchedPage` (plus the operation's options as
  keyword arguments). Its parses are cached on it, so extractors run on the same page share one
  tree, one JSON-LD read, one microdata read.
- **Output:** the operation's item (:mod:`core.items`: ``Page``, ``Contacts``, ``Products``,
  ``Video``), every field present, ``None``/``[]`` when the page does not say. The item classes
  are the one declaration of the answer's shape; the API's schemas are generated from them.
- **Raising:** an extractor raises a :class:`~crawler.exceptions.CrawlError` subclass, and only
  that, when the page is an answer in itself that the operation must fail with (a private or
  deleted video is ``VideoUnavailable``): the spider turns it into a failed result with that
  code. Malformed markup is never an exception (empty fields instead; each parser call is
  guarded where it is made). Anything else that escapes is a bug: the spider reports it as
  ``internal_error`` and nothing is charged.
"""
