"""Spiders: fetch and follow only; extraction lives in :mod:`crawler.extract`."""
