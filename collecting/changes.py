"""Change tracking in a collection's slice (docs/api.md, Change tracking): before a batch of
results is stored, each successful page is compared with its latest version under the
collection's tag (:func:`core.changes.compare`), its ``change`` set, and its new version
handed to the store, which replaces the old one in the batch's transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.changes import compare, digest
from core.contract import PageStatus
from storage import page_versions
from storage.collection_store import PageOutcome
from storage.db import Database


def content_of(data: Any) -> str:
    """What is compared of a page's ``data``: its markdown, else its text; an extract without
    them (contacts, products, records) as indented JSON (a line a value: a readable diff)."""
    if isinstance(data, dict):
        for name in ("markdown", "text"):
            if isinstance(data.get(name), str):
                return data[name]
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)


class ChangeTracker:
    """The comparisons of one collection: its account's pages under ``tag``."""

    def __init__(self, db: Database, account_id: str, tag: str):
        self.db, self.account_id, self.tag = db, account_id, tag

    @classmethod
    def of(cls, db: Database, account_id: str, spec: dict[str, Any]) -> ChangeTracker | None:
        """The tracker of a collection (its stored ``spec``); None when it tracks nothing."""
        tracking = spec.get("change_tracking")
        return cls(db, account_id, tracking["tag"]) if tracking else None

    @staticmethod
    def versions(tracker: ChangeTracker | None, outcomes: Sequence[PageOutcome]
                 ) -> tuple[list[page_versions.Version], str | None]:
        """What the store takes of a batch: its new versions and the tag (nothing, None,
        without a tracker), the outcomes' ``change`` set on the way."""
        if tracker is None:
            return [], None
        return tracker.annotate(outcomes), tracker.tag

    def annotate(self, outcomes: Sequence[PageOutcome]) -> list[page_versions.Version]:
        """Set the ``change`` of each successful outcome (one query for their previous
        versions); their new versions, for the store."""
        pages = [o for o in outcomes if o.status == PageStatus.SUCCEEDED]
        known = page_versions.previous(self.db, self.account_id, self.tag,
                                       [page.key for page in pages])
        versions = []
        for page in pages:
            content = content_of(page.data)
            before = known.get(page.key)
            change = compare(content, None if before is None else (
                before.digest, before.content, before.fetched_at))
            page.change = change.as_dict()
            versions.append(page_versions.Version(page.key, page.url, page.fetched_at,
                                                  digest(content), content, change.status))
        return versions
