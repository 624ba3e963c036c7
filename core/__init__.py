"""The framework-free core every process imports: the configuration, the HTTP contract's values
(error codes, statuses), the source policy, the items, formats and the crawl's rules.

It imports neither Scrapy/Twisted, Flask/werkzeug/marshmallow, SQLAlchemy, Redis nor RQ (a test
holds it to that): the API, the workers, storage, batch code and ``scrapy crawl`` all build on it,
and each adds its own framework on top (docs/design.md, "Packages").
"""
