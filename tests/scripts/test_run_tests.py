"""`make test`'s passes: the ones that run beside the embedded pass keep their output whole and
their own files and Redis databases."""
import sys
import time
from urllib.parse import urlsplit

import pytest

from scripts import run_tests
from scripts.run_tests import Beside, pytest_status

pytestmark = pytest.mark.no_services


@pytest.fixture
def artifacts(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_ARTIFACTS_DIR", str(tmp_path))
    return tmp_path


def test_a_pass_beside_the_others_prints_its_output_whole_when_collected(artifacts, capfd):
    script = "import sys, time; print('first', 'line'); time.sleep(0.2); print('last', 'line'); sys.exit(1)"
    before = time.monotonic()
    running = Beside("example (a pass)", [sys.executable, "-c", script], pytest_status).start()
    started = capfd.readouterr().out
    assert "output in" in started and "first line" not in started

    running.process.wait()
    time.sleep(1.0)  # the pass ended a second before it is collected
    outcome = running.collect()

    printed = capfd.readouterr().out
    assert printed.index("first line") < printed.index("last line")
    assert outcome.status == "FAILED (pytest exit 1)" and outcome.failed
    assert outcome.seconds <= time.monotonic() - before - 1.0  # its own time, not the wait to collect it
    assert running.log.parent == artifacts and running.log.read_text().count("line") == 2


def test_the_services_pass_has_its_own_data_dir_and_redis_databases():
    isolation = run_tests.SERVICES_ISOLATION
    assert isolation["DATA_DIR"] != "var/test"  # pytest.ini's, which the embedded pass uses
    services = urlsplit(run_tests.SERVICES["REDIS_URL"])
    taken = {"/0", "/1", "/3", "/4"}  # the pass's layer and broker; the tests' own defaults
    for name in ("TEST_REDIS_URL", "TEST_REDIS_BROKER_URL"):
        url = urlsplit(isolation[name])
        assert url.netloc == services.netloc and url.path not in taken
        taken.add(url.path)


def test_the_embedded_halves_have_their_own_data_dir_and_redis_databases():
    second = run_tests.SECOND_HALF_ISOLATION
    services = run_tests.SERVICES_ISOLATION
    assert second["DATA_DIR"] not in ("var/test", services["DATA_DIR"])
    own = ("TEST_REDIS_URL", "TEST_REDIS_BROKER_URL")
    taken = {"/0", "/1", "/3", "/4"} | {urlsplit(services[name]).path for name in own}
    for name in own:
        assert urlsplit(second[name]).path not in taken
        taken.add(urlsplit(second[name]).path)


def test_the_embedded_halves_together_select_every_test_once(artifacts, monkeypatch):
    started = []
    monkeypatch.setattr(Beside, "start", lambda self: started.append(self) or self)
    first, second = run_tests.embedded_halves([])
    assert started == [second]
    assert first[2:] == list(run_tests.FIRST_HALF)
    assert second.command[-len(run_tests.FIRST_HALF):] == [f"--ignore={f}" for f in run_tests.FIRST_HALF]
    assert second.env["DATA_DIR"] == run_tests.SECOND_HALF_ISOLATION["DATA_DIR"]


def test_a_developers_selection_runs_as_one_embedded_pass():
    first, second = run_tests.embedded_halves(["tests/runs/training_runs/test_api_runs.py", "-k", "start"])
    assert second is None and first == ["-m", "not slow", "tests/runs/training_runs/test_api_runs.py", "-k", "start"]
