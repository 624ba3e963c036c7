"""``scrapy crawl video -a url=…``: the video metadata operation (``POST /video-platform``).

The watch page is fetched like any page (source policy and robots.txt apply). With
``YOUTUBE_API_KEY`` set, one Data API ``videos.list`` call then supplies counts, caption status
and embeddability; if that call fails the page's own figures are kept (``source: "page"``), so
a quota problem on the Data API degrades the answer instead of failing it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request

from core.contract import PageStatus
from core.items import PageResult, ResponseCaching
from core.items.video import Video
from core.video_platform import (
    API_KEY_HEADER,
    data_api_videos_url,
    parse_video_url,
    watch_url,
)
from crawler.exceptions import CrawlError, ExtractionFailed, UnsupportedVideo
from crawler.extract.fetched import FetchedPage
from crawler.extract.video import apply_data_api, extract_video
from crawler.spiders.base import SinglePageSpider

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

class VideoSpider(SinglePageSpider):
    """Metadata, engagement, captions and related videos of one public, embeddable video.

    ``url`` is any link form of the platform (watch, youtu.be, shorts, embed, live, m., music.,
    nocookie); anything else gives a failed result ``unsupported_video`` without a fetch.
    """

    name = "video"

    def __init__(self, url: str | None = None, *args: Any, **kwargs: Any):
        super().__init__(url, *args, **kwargs)
        self.video_id = parse_video_url(self.url)

    async def start(self) -> AsyncIterator[Request | PageResult]:
        refused = self.refused_url()
        if refused is not None:
            yield self._failure(refused, None)
            return
        if self.video_id is None:
            yield self._failure(UnsupportedVideo(
                "Not a link to a video of the supported platform.", url=self.url), None)
            return
        page = watch_url(self.video_id, self.settings["YOUTUBE_BASE_URL"])
        yield Request(page, callback=self.parse, errback=self.failed, dont_filter=True)

    def extract(self, page: FetchedPage) -> Video:
        return extract_video(page, video_id=self.video_id)

    def parse(self, response: Response) -> Iterator[PageResult | ResponseCaching | Request]:
        key = self.settings.get("YOUTUBE_API_KEY")
        for result in super().parse(response):
            if not isinstance(result, PageResult) or result.status != PageStatus.SUCCEEDED \
                    or not key:
                yield result  # a failure, the page alone, or its ResponseCaching
                continue
            yield Request(
                data_api_videos_url(self.settings["YOUTUBE_API_URL"], [self.video_id]),
                headers={API_KEY_HEADER: key, "Accept": "application/json"},
                callback=self.parse_data_api, errback=self.data_api_failed,
                cb_kwargs={"result": result}, dont_filter=True,
                meta={"dont_obey_robotstxt": True},  # an API call, not a page of a site
            )

    def parse_data_api(self, response: Response, result: PageResult) -> Iterator[PageResult]:
        try:
            answer = json.loads(response.text)
            result.data = apply_data_api(result.data, answer)
        except CrawlError as error:  # the Data API says private, deleted or not embeddable
            error.url = error.url or self.url
            yield self._failure(error, None)
            return
        except ValueError as error:  # not JSON: the page's own figures stay
            self.logger.warning("Unreadable Data API answer for %s: %r", self.video_id, error)
        except Exception:  # a bug of ours: a failed result (500, free), as in SinglePageSpider
            self.logger.exception("Reading the Data API answer failed for %s", self.video_id)
            yield self._failure(ExtractionFailed(
                "The video could not be processed; nothing was charged.", url=self.url), None)
            return
        yield result

    def data_api_failed(self, failure: Failure) -> Iterator[PageResult]:
        self.logger.warning("Data API call failed for %s: %s", self.video_id, failure.value)
        yield failure.request.cb_kwargs["result"]

