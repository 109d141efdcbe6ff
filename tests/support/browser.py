"""Browser tests: real headless Chromium (Debian's) driven by Playwright, against the real
product served by uvicorn in a subprocess (tests/support/asgi_server.py).

Fixtures:
- `live_server`: one server per test module with users `owner` / `other` (passwords
  `<name>-pass-123`) and a staff user `staff`; `live_server.api(username)` is an httpx client
  logged in as that user (session cookie + CSRF header), for setting up data through the API.
- `browser`: one Chromium per session.
- `page`: a fresh browser context logged in as `owner`; on failure a screenshot is saved.
- `artifacts_dir`: where screenshots go (TEST_ARTIFACTS_DIR, default var/test-artifacts).

Tests using these are marked `browser` automatically.
"""
import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.support.asgi_server import ROOT, AsgiServer, logged_in_client

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
USERS = """
import json
from django.contrib.auth import get_user_model
User = get_user_model()
for name in ("owner", "other"):
    User.objects.create_user(name, password=f"{name}-pass-123")
User.objects.create_user("staff", password="staff-pass-123", is_staff=True, is_superuser=True)
print(json.dumps({"ok": True}))
"""
BROWSER_FIXTURES = {"browser", "page", "live_server"}


def pytest_collection_modifyitems(config, items):
    """Marks browser tests and runs them last: Playwright's sync API keeps an event loop
    running in the main thread for the session, which breaks asyncio tests run after it."""
    in_browser = [item for item in items if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ()))]
    for item in in_browser:
        item.add_marker(pytest.mark.browser)
    chosen = set(map(id, in_browser))
    items[:] = [item for item in items if id(item) not in chosen] + in_browser


class LiveServer(AsgiServer):
    def api(self, username: str = "owner") -> httpx.Client:
        """An httpx client logged in as `username`, sending the CSRF header the API wants."""
        client = logged_in_client(self, username, f"{username}-pass-123")
        client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
        client.headers["Referer"] = self.url + "/"
        return client


@pytest.fixture(autouse=True)
def _live_server_helper():
    """Replaces pytest-django's helper of the same name, which would treat our `live_server`
    as its own (a threaded WSGI server, no websockets) and demand a transactional database."""
    yield


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    with LiveServer(tmp_path_factory.mktemp("live"), env={"DJANGO_ALLOW_ASYNC_UNSAFE": ""}) as server:
        server.shell_json(USERS)
        yield server


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    path = Path(os.environ.get("TEST_ARTIFACTS_DIR", ROOT / "var" / "test-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        message = f"no Chromium at {CHROMIUM} (`make browser` installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread, which Django's
    # async-safety check mistakes for async code in the test process's own ORM calls
    # (fixtures, teardown). The live server runs in its own process without this.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def log_in(page, server: AsgiServer, username: str = "owner") -> None:
    page.goto(server.url + "/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-pass-123")
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/")


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.browser_failed = report.failed


@pytest.fixture
def page(browser, live_server, artifacts_dir, request):
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    context.set_default_timeout(10_000)
    tab = context.new_page()
    log_in(tab, live_server)
    yield tab
    if getattr(request.node, "browser_failed", False):
        tab.screenshot(path=str(artifacts_dir / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()
