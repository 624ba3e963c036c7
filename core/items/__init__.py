"""Items: what extraction produces and spiders yield, each field documented.

Dataclasses in the zyte-common-items style: one module per operation, a field per answer
field, each with its description (which is also its description in the OpenAPI document: the
API's response schemas are generated from these classes, so the shape is written once). A
field the page does not state is ``None`` (or ``[]`` for lists), never omitted and never ``""``.

Dependency-free (standard library only): the API imports these to build its schemas without
loading Scrapy.
"""

from core.items.result import NOT_MODIFIED, PageResult, ResponseCaching, plain

__all__ = ["NOT_MODIFIED", "PageResult", "ResponseCaching", "plain"]
