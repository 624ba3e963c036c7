"""Social profiles as news, company and shop pages link them: channel links in every form,
profile tabs, and the platforms' own pages (share, intent, hashtag, search…) that are no
account. Pure functions of (url, html); see crawler/extract/social_platforms.py for the table.
"""

from __future__ import annotations

import pytest

from tests.support.contact_pages import URL, fixture, links


@pytest.mark.parametrize(("url", "profile", "handle"), [
    # YouTube: the four forms of a channel link, and a channel's tabs
    ("https://www.youtube.com/channel/UCn0rThW1nDr0b0t1cS5x2Qw?sub_confirmation=1",
     "https://www.youtube.com/channel/UCn0rThW1nDr0b0t1cS5x2Qw", "UCn0rThW1nDr0b0t1cS5x2Qw"),
    ("https://www.youtube.com/channel/UCn0rThW1nDr0b0t1cS5x2Qw/featured",
     "https://www.youtube.com/channel/UCn0rThW1nDr0b0t1cS5x2Qw", "UCn0rThW1nDr0b0t1cS5x2Qw"),
    ("https://www.youtube.com/user/NorthwindDemos/videos",
     "https://www.youtube.com/user/NorthwindDemos", "NorthwindDemos"),
    ("https://youtube.com/c/NorthwindRobotics/about/",
     "https://youtube.com/c/NorthwindRobotics", "NorthwindRobotics"),
    ("https://www.youtube.com/@northwind.engineering/streams",
     "https://www.youtube.com/@northwind.engineering", "northwind.engineering"),
    ("https://m.youtube.com/@Acme-TV", "https://m.youtube.com/@Acme-TV", "Acme-TV"),
    ("https://www.youtube.com/NorthwindRobotics",  # the legacy vanity URL
     "https://www.youtube.com/NorthwindRobotics", "NorthwindRobotics"),
    # tabs of other platforms' profiles
    ("https://twitter.com/acme/media", "https://twitter.com/acme", "acme"),
    ("https://x.com/acme/followers", "https://x.com/acme", "acme"),
    ("https://www.linkedin.com/company/acme-gmbh/about/",
     "https://www.linkedin.com/company/acme-gmbh", "acme-gmbh"),
    ("https://www.facebook.com/acme.inc/about", "https://www.facebook.com/acme.inc",
     "acme.inc"),
    ("https://www.instagram.com/acme_official/reels/", "https://www.instagram.com/acme_official",
     "acme_official"),
    # XING: people, company pages (and their old address), and their tabs
    ("https://www.xing.com/profile/Max_Mustermann2", "https://www.xing.com/profile/Max_Mustermann2",
     "Max_Mustermann2"),
    ("https://www.xing.com/profile/Erika_Musterfrau/cv",
     "https://www.xing.com/profile/Erika_Musterfrau", "Erika_Musterfrau"),
    ("https://www.xing.com/pages/acme-gmbh/jobs", "https://www.xing.com/pages/acme-gmbh",
     "acme-gmbh"),
    ("https://www.xing.com/companies/acmegmbh", "https://www.xing.com/companies/acmegmbh",
     "acmegmbh"),
    ("https://www.xing.com/pages/acme-gmbh/about-us", "https://www.xing.com/pages/acme-gmbh",
     "acme-gmbh"),
    ("https://www.xing.com/companies/acmegmbh/updates",
     "https://www.xing.com/companies/acmegmbh", "acmegmbh"),
])
def test_profile_forms_and_tabs(url: str, profile: str, handle: str) -> None:
    assert [(link["url"], link["handle"]) for link in links(url)] == [(profile, handle)]


@pytest.mark.parametrize("url", [
    # X / Twitter: the platform's own pages, share and follow intents
    "https://twitter.com/followers", "https://twitter.com/following", "https://x.com/home",
    "https://twitter.com/explore", "https://twitter.com/search?q=%23Solingen",
    "https://twitter.com/hashtag/Solingen", "https://twitter.com/i/lists/1234",
    "https://twitter.com/i/flow/login", "https://twitter.com/settings/profile",
    "https://twitter.com/signup", "https://twitter.com/tos", "https://x.com/privacy",
    "https://x.com/intent/post?url=x", "https://twitter.com/intent/follow?screen_name=acme",
    "https://twitter.com/share", "https://twitter.com/home/media",
    # Facebook
    "https://www.facebook.com/share.php?u=x", "https://www.facebook.com/share/p/AbC123/",
    "https://www.facebook.com/groups/solingen.nachbarn/",
    "https://www.facebook.com/events/812345678901234/", "https://www.facebook.com/pages/",
    "https://www.facebook.com/plugins/page.php?href=acme", "https://www.facebook.com/watch/",
    "https://www.facebook.com/hashtag/solingen", "https://www.facebook.com/photo/?fbid=1",
    # Instagram
    "https://www.instagram.com/explore/tags/solingen/", "https://www.instagram.com/explore/",
    "https://www.instagram.com/accounts/login/", "https://www.instagram.com/reel/C4xYz12AbCd/",
    "https://www.instagram.com/stories/acme/123/",
    # LinkedIn
    "https://www.linkedin.com/feed/", "https://www.linkedin.com/shareArticle?mini=true&url=x",
    "https://www.linkedin.com/company/acme/posts/12345",
    # YouTube
    "https://www.youtube.com/results?search_query=solingen", "https://www.youtube.com/embed/x1",
    "https://www.youtube.com/shorts/aBcDeFgHiJk", "https://www.youtube.com/playlist?list=PL1",
    "https://www.youtube.com/channel", "https://www.youtube.com/channel/UCshort",
    "https://www.youtube.com/c/", "https://www.youtube.com/user", "https://www.youtube.com/feed",
    "https://www.youtube.com/feed/subscriptions", "https://www.youtube.com/live",
    "https://www.youtube.com/watch", "https://www.youtube.com/redirect?q=x",
    "https://www.youtube.com/favicon.ico", "https://www.youtube.com/@acme/community/post1",
    # TikTok, GitHub
    "https://www.tiktok.com/tag/solingen", "https://www.tiktok.com/discover/solingen",
    "https://www.tiktok.com/@acme/video/7301234567890123456", "https://github.com/login",
    "https://github.com/features/actions",
    # XING: share links, the platform's own pages
    "https://www.xing.com/spi/shares/new?url=https%3A%2F%2Facme.de",
    "https://www.xing.com/app/user?op=share;url=https://acme.de", "https://www.xing.com/jobs",
    "https://www.xing.com/news/klartext/1", "https://www.xing.com/profile",
    "https://www.xing.com/pages/", "https://www.xing.com/profile/edit",
    "https://www.xing.com/profile/my_profile", "https://www.xing.com/companies/new",
    "https://www.xing.com/events/acme-day-123",
])
def test_platform_pages_are_not_profiles(url: str) -> None:
    assert links(url) == []


def test_news_article_keeps_profiles_and_drops_shares_and_hashtags() -> None:
    """A news page links a dozen share, hashtag and video pages of the platforms beside the
    paper's and the author's own accounts: only the accounts come back."""
    found = {(link.platform, link.handle) for link in fixture("news_article_de").social_links}
    assert found == {("facebook", "SolingerRundschau"), ("x", "sg_rundschau"),
                     ("x", "janabeispiel"), ("instagram", "solingerrundschau"),
                     ("tiktok", "solingerrundschau"), ("youtube", "SolingerRundschau")}


def test_company_page_youtube_channels_in_all_forms() -> None:
    found = [(link.url, link.handle) for link in fixture("company_youtube_en").social_links
             if link.platform == "youtube"]
    assert found == [
        ("https://www.youtube.com/channel/UCn0rThW1nDr0b0t1cS5x2Qw", "UCn0rThW1nDr0b0t1cS5x2Qw"),
        ("https://www.youtube.com/c/NorthwindRobotics", "NorthwindRobotics"),
        ("https://www.youtube.com/user/NorthwindDemos", "NorthwindDemos"),
        ("https://www.youtube.com/@northwind.engineering", "northwind.engineering"),
        ("https://www.youtube.com/NorthwindRobotics", "NorthwindRobotics"),
    ]
    assert all(link.source_url == "https://www.northwind-robotics.com/about/"
               for link in fixture("company_youtube_en").social_links)


def test_source_url_is_the_page() -> None:
    assert [link["source_url"] for link in links("https://www.youtube.com/@acme")] == [URL]


def test_twitter_and_x_links_to_one_account_are_one_profile() -> None:
    found = links("https://twitter.com/acme", "https://x.com/Acme",
                  "https://mobile.twitter.com/acme", "https://x.com/acme_support")
    assert [(link["platform"], link["handle"]) for link in found] == [
        ("x", "acme"), ("x", "acme_support")]
