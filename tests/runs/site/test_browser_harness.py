"""The browser harness itself: Debian's chromium, logged in, renders the home page."""


def test_the_logged_in_home_page_renders_in_chromium(page, live_server):
    page.goto(live_server.url + "/")
    assert page.locator("nav[aria-label=Main]").is_visible()
    assert "Log out owner" in page.locator("nav").inner_text()
