"""Signals of our own, sent through a crawler's signal manager like Scrapy's."""

#: Request meta key: the id of the fed job a request belongs to (:mod:`crawler.feed`).
JOB_KEY = "feed_job"
#: Request meta key, set once its fed job is over (answered or given up on): the request is
#: not downloaded any more, wherever it waits (scheduler, robots.txt, a host slot).
JOB_CLOSED = "feed_job_closed"

#: Sent when the warm crawler gives up on a crawl, or with ``job=<id>`` on one fed job (its
#: time budget or its RQ timeout is spent). Scrapy's own stop waits for the downloads in
#: progress to end, up to their download timeout; a job over its timeout should free its
#: connection and its host slot at once, so the download handler cancels them on this signal.
crawl_abandoned = object()
