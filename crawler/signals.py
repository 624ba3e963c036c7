"""Signals of our own, sent through a crawler's signal manager like Scrapy's."""

#: Sent (no arguments) when the warm crawler stops a crawl its caller gave up on (the crawl's
#: time budget or the job's RQ timeout is spent). Scrapy's own stop waits for the downloads in
#: progress to end, up to their download timeout; a job over its timeout should free its
#: connection and its host slot at once, so the download handler cancels them on this signal.
crawl_abandoned = object()
