"""What the fake search providers know: one small corpus, rendered by each fake in its own
provider's shape (see search_providers.py).

The corpus carries every quirk the adapters must handle: HTML tags and entities in titles and
snippets, the same page twice under another URL form, more results than any ``limit``,
absolute, naive, relative and unreadable dates, and durations in every notation.
"""

from __future__ import annotations

#: The fakes' ``Date`` header: relative ages ("5 minutes ago") are counted from it.
FIXED_DATE = "Thu, 15 Jan 2026 16:30:00 GMT"

#: Web pages: (url, title, snippet). The second is the first again (http, www., slash,
#: fragment); there are more than 20, so every provider has more than ``limit`` to give.
WEB = [
    ("https://github.com/rust-lang/async-traits", "<b>Async</b> traits &amp; you",
     "Why <strong>async traits</strong> took&nbsp;years\n to land."),
    ("http://www.github.com/rust-lang/async-traits/#readme", "async-traits (mirror)",
     "The same page again."),
    ("https://blog.example.org/async?page=2", "Async, page 2", "Second page of the series."),
    ("https://blog.example.org/async?page=3", "Async, page 3", "Third page of the series."),
    *[(f"https://example.com/result/{n}", f"Result {n}", f"Snippet {n}.") for n in range(4, 25)],
]

#: News: (url, title, snippet, publisher or None, absolute date or None, relative age).
NEWS = [
    ("https://www.bbc.co.uk/news/tides-1", "Tides <b>rise</b> again", "Spring tides&hellip;",
     "BBC News", "2026-01-15T14:30:00", "2 hours ago"),
    ("https://news.example.net/flood-warning", "Flood warning", "Issued this afternoon.",
     None, None, "5 minutes ago"),
    ("https://paper.example.com/estuary", "Estuary survey", "Results published.",
     None, None, "3 days ago"),
    ("https://wire.example.com/harbour", "Harbour reopens", "After the storm.",
     "Wire", "2026-01-14T09:00:00+01:00", "1 day ago"),
    ("http://bbc.co.uk/news/tides-1#comments", "Tides rise again (comments)", "Duplicate.",
     "BBC News", "2026-01-15T14:30:00", "2 hours ago"),
    ("https://gazette.example.org/just-in", "Just in", "Breaking.", None, None, "just now"),
    *[(f"https://news.example.com/story/{n}", f"Story {n}", f"Story {n} snippet.", None,
       "2026-01-10T08:00:00Z", "5 days ago") for n in range(7, 20)],
]

#: Videos: (url, title, channel, duration as the provider writes it, thumbnail, date).
VIDEOS = [
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "Never Gonna Give You Up &amp; more",
     "Rick Astley", "3:33", "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg",
     "2009-10-25T06:57:33"),
    ("https://youtu.be/dQw4w9WgXcQ", "Never Gonna Give You Up (short link)", "Rick Astley",
     "3:33", "", None),
    ("https://www.youtube.com/watch?v=9bZkp7q19f0", "Gangnam Style", "officialpsy",
     "PT4M12S", "//i.ytimg.com/vi/9bZkp7q19f0/hqdefault.jpg", "2012-07-15T07:46:32Z"),
    ("https://vimeo.com/76979871", "The New Vimeo Player", "Vimeo Staff", 754.0,
     "https://i.vimeocdn.com/video/452001751.jpg", "2013-10-03"),
    ("https://www.youtube.com/shorts/aqz-KE-bpKQ", "Big Buck Bunny", "Blender", None,
     "https://i.ytimg.com/vi/aqz-KE-bpKQ/hqdefault.jpg", None),
    ("https://www.dailymotion.com/video/x8abc", "Documentary", "Docs", "03:45:00", None, None),
    ("https://www.youtube.com/watch?v=deleted0001", "A deleted video", "Gone", "1:00", None,
     None),
    *[(f"https://videos.example.com/v/{n}", f"Clip {n}", "Clips", n * 10, None, None)
      for n in range(8, 20)],
]

#: What videos.list knows (YouTube counts are strings; hidden counts are absent). The id of
#: ``deleted0001`` is unknown to it, as a deleted video's is.
YOUTUBE_VIDEOS = {
    "dQw4w9WgXcQ": ("PT3M33S", {"viewCount": "1500000000", "likeCount": "17000000",
                                "commentCount": "2300000"}),
    "9bZkp7q19f0": ("PT4M12S", {"viewCount": "5000000000", "likeCount": "29000000"}),
    "aqz-KE-bpKQ": ("PT10M34S", {"viewCount": "1234"}),
}
