"""Crawling: settings, source policy, spiders and pure extraction functions."""
