"""Every page has an icon: pages name it, and /favicon.ico (asked for by the admin and API docs) leads to it."""


def test_favicon_ico_leads_to_the_served_icon(client):
    response = client.get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in b"".join(response.streaming_content)


def test_pages_name_their_icon(logged_in):
    assert b'rel="icon"' in logged_in.get("/").content
