"""The server-rendered pages: logging in and out, and the run list on the home page."""

from runs.training_runs.models import Run


def test_the_login_page_renders(client, db):
    response = client.get("/login/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="username"' in html and 'name="password"' in html and "csrfmiddlewaretoken" in html


def test_a_wrong_password_shows_the_error(client, owner):
    response = client.post("/login/", {"username": "owner", "password": "wrong"})
    assert response.status_code == 200
    assert "do not match" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_right_password_logs_in_and_goes_home(client, owner):
    response = client.post("/login/", {"username": "owner", "password": "owner-pass-123"})
    assert response.status_code == 302 and response.url == "/"
    assert client.session["_auth_user_id"] == str(owner.pk)


def test_login_does_not_redirect_off_site(client, owner):
    response = client.post("/login/?next=https://evil.example/", {
        "username": "owner", "password": "owner-pass-123", "next": "https://evil.example/"})
    assert response.status_code == 302 and response.url == "/"


def test_anonymous_home_redirects_to_login(client, db):
    response = client.get("/")
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_home_lists_only_the_users_runs(logged_in, run, other_user, library_for):
    theirs = library_for(other_user, "theirs")["run"]
    response = logged_in.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert run.name in html and theirs.name not in html


def test_home_escapes_run_names(logged_in, run):
    Run.objects.filter(pk=run.pk).update(name="<script>alert(1)</script>")
    html = logged_in.get("/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_staff_home_lists_everyones_runs(client, staff_user, run):
    client.force_login(staff_user)
    assert run.name in client.get("/").content.decode()


def test_an_empty_home_says_how_to_start(logged_in):
    assert "No runs yet" in logged_in.get("/").content.decode()


def test_logout_by_post_ends_the_session(logged_in):
    response = logged_in.post("/logout/")
    assert response.status_code == 302 and response.url.startswith("/login/")
    assert logged_in.get("/").status_code == 302


def test_logout_by_get_is_not_allowed(logged_in):
    assert logged_in.get("/logout/").status_code == 405
    assert logged_in.get("/").status_code == 200
