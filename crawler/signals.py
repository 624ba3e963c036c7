"""Signals of our own, sent through a crawler's signal manager like Scrapy's."""

#: Request meta key: the id of the fed job a request belongs to (:mod:`crawler.feed`).
JOB_KEY = "feed_job"

#: Sent when the warm crawler gives up on a crawl, or with ``job=<id>`` on one fed job (its
#: time budget or its RQ timeout is spent). Scrapy's own stop waits for the downloads in
#: progress to end, up to their download timeout; a job over its timeout should free its
#: connection and its host slot at once, so the download handler cancels them on this signal.
crawl_abandoned = object()
