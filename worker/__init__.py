"""Background work: RQ queues, job functions, and the warm Scrapy worker that runs them."""
