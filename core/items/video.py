"""The video metadata operation's answer (``POST /video-platform``, ``scrapy crawl video``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.items.fields import described


@dataclass(kw_only=True)
class Channel:
    id: str | None = described("The channel's id.", default=None)
    name: str | None = described("The channel's name.", default=None)
    url: str | None = described("The channel's page.", default=None)


@dataclass(kw_only=True)
class Thumbnail:
    url: str = described("The image.")
    width: int | None = described("Pixels.", default=None)
    height: int | None = described("Pixels.", default=None)


@dataclass(kw_only=True)
class Engagement:
    """Counts; null where the platform hides them (never 0 for unknown)."""

    views: int | None = described("View count.", default=None)
    likes: int | None = described("Like count.", default=None)
    comments: int | None = described("Comment count (Data API only).", default=None)


@dataclass(kw_only=True)
class CaptionTrack:
    language: str | None = described("Language code, e.g. en.", default=None)
    name: str | None = described("The track's name as shown.", default=None)
    auto_generated: bool = described("True for automatic speech recognition.", default=False)


@dataclass(kw_only=True)
class Captions:
    status: str = described("available|none|unknown: unknown when captions are announced but "
                            "no track can be read.", default="unknown")
    tracks: list[CaptionTrack] = described("The caption tracks.", factory=list)


@dataclass(kw_only=True)
class RelatedVideo:
    video_id: str = described("The related video's id.")
    url: str = described("Its canonical watch URL.")
    title: str | None = described("Its title.", default=None)
    channel: str | None = described("Its channel's name.", default=None)
    duration_seconds: int | None = described("Its length; null when the page shows none "
                                             "(a live stream).", default=None)


@dataclass(kw_only=True)
class Video:
    """Metadata of one public, embeddable video."""

    video_id: str = described("The video's id.")
    url: str = described("Canonical watch URL.")
    title: str | None = described("The title.", default=None)
    description: str | None = described("The description, line breaks kept.", default=None)
    published_at: str | None = described("ISO 8601 in UTC; as written when the platform gives "
                                         "no zone (a plain date).", default=None)
    duration_seconds: int | None = described("Length in seconds; null while live or when not "
                                             "stated.", default=None)
    channel: Channel = described("Who published it.", factory=Channel)
    thumbnails: list[Thumbnail] = described("The sizes the platform offers.", factory=list)
    tags: list[str] = described("The video's tags.", factory=list)
    category: str | None = described("The platform's category.", default=None)
    is_live: bool | None = described("Streaming live now.", default=None)
    is_family_safe: bool | None = described("Not age-restricted.", default=None)
    embeddable: bool | None = described("Can be embedded; null when the page does not say "
                                        "(videos that refuse it are not served).",
                                        default=None)
    engagement: Engagement = described("Counts, null when hidden.", factory=Engagement)
    captions: Captions = described("Caption status and tracks.", factory=Captions)
    related_videos: list[RelatedVideo] = described(
        "Those the page lists, in its order, each once, never the video itself, at most 20.",
        factory=list)
    source: str = described("data_api|page: where the counts, caption status and "
                            "embeddability came from.", default="page")
