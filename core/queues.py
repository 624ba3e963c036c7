"""The queues' names: declared here, framework-free, for every process that names a queue
(:mod:`worker.queues` opens them; ``make run``'s supervisor reads ``/healthz`` by them and
imports neither RQ nor Redis)."""

#: Single-page operations; an API request is waiting on each of these.
INTERACTIVE = "interactive"
#: Background collections (crawls and batches).
COLLECTIONS = "collections"
#: Housekeeping the cron scheduler enqueues (``worker.cron``): short jobs, no crawling.
MAINTENANCE = "maintenance"
#: Every queue, in the order a worker takes them by default (maintenance first: see
#: ``worker.__main__``).
QUEUES = (MAINTENANCE, INTERACTIVE, COLLECTIONS)
