"""The test passes behind `make test` (and `make test-fast`, the first pass alone).

0. lint: ruff (ruff.toml); types: mypy as mypy.ini says (every run whole); a finding fails;
1. embedded: the whole suite on the embedded defaults (SQLite, in-memory channel layer,
   filesystem broker), in two halves side by side (tests/runs and tests/security; the rest);
2. services: again on PostgreSQL and Redis, minus the `slow` and `trainer` tests; skipped with a
   message when they do not answer, except under CI=true, where that is a failure;
3. slow (under CI=true or SLOW=1) and 4. learning (under LEARNING=1): alone, after the others.
The types and services passes run beside the embedded one, each in its own process and log;
passes share nothing on disk or in Redis (SECOND_HALF_ISOLATION, SERVICES_ISOLATION). Extra
arguments go to pytest in the embedded pass (one, not halved) and the services pass.
Details: docs/getting-started.md#make-test.
"""
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
# Overridable so a developer can point the pass at services elsewhere.
SERVICES = {
    "DATABASE_URL": os.environ.get("SERVICES_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/grpo"),
    "REDIS_URL": os.environ.get("SERVICES_REDIS_URL", "redis://127.0.0.1:6379/0"),
    "CELERY_BROKER_URL": os.environ.get("SERVICES_BROKER_URL", "redis://127.0.0.1:6379/1"),
}


def redis_database(url: str, number: int) -> str:
    """The same Redis server as `url`, another database."""
    return urlsplit(url)._replace(path=f"/{number}").geturl()


# What keeps the services pass off the embedded pass's files and Redis databases while both run:
# its own DATA_DIR, and other databases for the tests that start a Redis-backed server or broker
# of their own (tests/controlplane/test_make_run.py, tests/runs/site/test_live_server.py: 3;
# tests/worker/test_queueing.py: 4), which both passes run.
SERVICES_ISOLATION = {
    "DATA_DIR": "var/test-services",
    "TEST_REDIS_URL": redis_database(SERVICES["REDIS_URL"], 7),
    "TEST_REDIS_BROKER_URL": redis_database(SERVICES["REDIS_URL"], 8),
    "TEST_ARTIFACTS_DIR": "var/test-artifacts/services",
}
# The embedded pass's first half, run in the foreground; the second half is every other test.
FIRST_HALF = ("tests/runs", "tests/security")
# What keeps the second half off the first's files and Redis databases: the tests that bring their
# own Redis use 3 and 4 by default, and tests/runs/site/test_live_server.py is in the first half while
# tests/controlplane/test_make_run.py and tests/worker/test_queueing.py are in the second.
SECOND_HALF_ISOLATION = {
    "DATA_DIR": "var/test-second-half",
    "TEST_REDIS_URL": redis_database(SERVICES["REDIS_URL"], 9),
    "TEST_REDIS_BROKER_URL": redis_database(SERVICES["REDIS_URL"], 10),
}
# Settings from the developer's shell that would change what a pass tests, or
# where it writes (DATA_DIR): each pass sets its own or uses pytest.ini's.
AMBIENT = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DATA_DIR")
CHECK_TIMEOUT_S = 3
NO_TESTS_COLLECTED = 5


@dataclass
class Outcome:
    name: str
    status: str  # "passed", "FAILED ...", "skipped: ..."
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status.startswith("FAILED")

    @property
    def skipped(self) -> bool:
        return self.status.startswith("skipped")


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def in_ci() -> bool:
    return _flag("CI")


def slow_pass() -> Outcome:
    name = "slow end-to-end (embedded)"
    if not (in_ci() or _flag("SLOW")):
        return Outcome(name, "skipped: set SLOW=1 to run the end-to-end tests (CI does)")
    return run_pytest(name, ["-m", "slow and not learning"], pass_env({}))


def learning_pass() -> Outcome:
    name = "learning (runs that must learn)"
    if not _flag("LEARNING"):
        return Outcome(name, "skipped: set LEARNING=1 (or `make test-learning`) to run them")
    return run_pytest(name, ["-m", "learning"], pass_env({}))


def lint_pass() -> Outcome:
    name = "lint (ruff check)"
    print(f"\n===== {name} pass =====", flush=True)
    started = time.monotonic()
    code = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT).returncode
    status = "passed" if code == 0 else f"FAILED (ruff exit {code}; `.venv/bin/ruff check --fix .` fixes some)"
    return Outcome(name, status, time.monotonic() - started)


def types_status(code: int) -> str:
    return "passed" if code == 0 else f"FAILED (mypy exit {code}; mypy.ini says what it checks)"


def pytest_status(code: int) -> str:
    if code == 0:
        return "passed"
    if code == NO_TESTS_COLLECTED:
        return "FAILED: no tests were collected (pytest exit 5)"
    return f"FAILED (pytest exit {code})"


@dataclass
class Beside:
    """A pass running in its own process beside the one in the foreground, its output kept in a
    log that is printed whole when it is collected, so that passes never interleave."""
    name: str
    command: list[str]
    status_of: Callable[[int], str]
    env: dict[str, str] | None = None
    log: Path = field(init=False)
    process: subprocess.Popen = field(init=False)
    started: float = field(init=False)
    ended: float | None = None  # when the process ended, seen by a thread: not when it is collected

    def start(self) -> "Beside":
        slug = "".join(c if c.isalnum() else "-" for c in self.name.split(" (")[0].lower())
        self.log = artifacts_dir() / f"pass-{slug}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        print(f"\n===== {self.name} pass started beside the others: {' '.join(self.command[2:])} "
              f"(output in {self.log} until it ends) =====", flush=True)
        self.started = time.monotonic()
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdout=out,
                                            stderr=subprocess.STDOUT)
        threading.Thread(target=self._note_the_end, daemon=True).start()
        return self

    def _note_the_end(self) -> None:
        self.process.wait()
        self.ended = time.monotonic()

    def collect(self) -> Outcome:
        code = self.process.wait()
        seconds = (self.ended or time.monotonic()) - self.started
        print(f"\n===== {self.name} pass (ran beside the others, {seconds:.0f} s) =====", flush=True)
        sys.stdout.buffer.write(self.log.read_bytes())
        sys.stdout.flush()
        return Outcome(self.name, self.status_of(code), seconds)


def types_pass() -> Beside:
    return Beside("types (mypy: worker, client, runs, controlplane)", [sys.executable, "-m", "mypy"],
                  types_status).start()


def pass_env(overrides: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in AMBIENT}
    return {**env, "PYTHONUNBUFFERED": "1", **overrides}


def run_pytest(name: str, args: list[str], env: dict[str, str]) -> Outcome:
    print(f"\n===== {name} pass: pytest {' '.join(args)} =====", flush=True)
    started = time.monotonic()
    code = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env).returncode
    return Outcome(name, pytest_status(code), time.monotonic() - started)


def where(url: str) -> str:
    """Host and port of a service URL, without any credentials, for messages."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}"


def postgres_problem(url: str) -> str | None:
    import psycopg
    from psycopg.conninfo import make_conninfo

    # The maintenance database, as pytest-django uses to create its own test database.
    try:
        psycopg.connect(make_conninfo(url, dbname="postgres"), connect_timeout=CHECK_TIMEOUT_S).close()
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable", reported as is
        return f"PostgreSQL at {where(url)} does not answer: {str(exc).strip()}"
    return None


def redis_problem(url: str) -> str | None:
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=CHECK_TIMEOUT_S, socket_connect_timeout=CHECK_TIMEOUT_S).ping()
    except Exception as exc:  # noqa: BLE001
        return f"Redis at {where(url)} does not answer: {exc}"
    return None


def services_problem() -> str | None:
    return (postgres_problem(SERVICES["DATABASE_URL"]) or redis_problem(SERVICES["REDIS_URL"])
            or redis_problem(SERVICES["CELERY_BROKER_URL"]))


SERVICES_MARKS = "not slow and not trainer and not browser and not contract and not own_server and not no_services"


def services_pass(extra: list[str]) -> Beside | Outcome:
    """The services pass started beside the embedded one, or why it cannot run."""
    name = "services (PostgreSQL, Redis)"
    problem = services_problem()
    if problem is None:
        command = [sys.executable, "-m", "pytest", "-m", SERVICES_MARKS, *extra]
        return Beside(name, command, pytest_status, pass_env({**SERVICES, **SERVICES_ISOLATION})).start()
    if in_ci():
        return Outcome(name, f"FAILED: CI=true but the services are not reachable. {problem}")
    print(f"\nSkipping the services pass: {problem}", flush=True)
    return Outcome(name, "skipped: services not reachable (set CI=true to make this an error)")


def artifacts_dir() -> Path:
    return Path(os.environ.get("TEST_ARTIFACTS_DIR", ROOT / "var" / "test-artifacts"))


def contract_counts_path() -> Path:
    """Where tests/api_contract/ leaves its counts (schemathesis: operations, cases, findings)."""
    return artifacts_dir() / "api-contract.txt"


def summary(outcomes: list[Outcome]) -> None:
    print("\n===== make test: summary =====")
    for outcome in outcomes:
        print(f"  {outcome.name:<58} {outcome.status}  ({outcome.seconds:.0f} s)")
    if any(outcome.failed for outcome in outcomes):
        verdict = "FAILED"
    elif any(outcome.skipped for outcome in outcomes):
        verdict = "OK, but not every pass ran"
    else:
        verdict = "all passes OK"
    contract = contract_counts_path()
    if contract.is_file():  # written by tests/api_contract/ in this run
        print(f"  API contract: {contract.read_text().strip()}")
    print(f"  => {verdict}", flush=True)


EMBEDDED = "embedded (SQLite, in-memory layer, filesystem broker)"


def embedded_halves(extra: list[str]) -> tuple[list[str], Beside | None]:
    """The foreground embedded pass's pytest arguments, and the second half started beside it;
    a developer's selection is one pass, in the foreground."""
    if extra:
        return ["-m", "not slow", *extra], None
    ignored = [f"--ignore={folder}" for folder in FIRST_HALF]
    second = Beside(f"{EMBEDDED}, second half", [sys.executable, "-m", "pytest", "-m", "not slow", *ignored],
                    pytest_status, pass_env(SECOND_HALF_ISOLATION))
    return ["-m", "not slow", *FIRST_HALF], second.start()


def main(argv: list[str]) -> int:
    fast = argv[:1] == ["--fast"]
    contract_counts_path().unlink(missing_ok=True)
    extra = argv[1:] if fast else argv
    first_half, second_half = embedded_halves(extra)
    beside = [types_pass()] + ([] if fast else [services_pass(extra)])
    if second_half is not None:
        beside.append(second_half)
    name = f"{EMBEDDED}, first half" if second_half else EMBEDDED
    outcomes = [lint_pass(), run_pytest(name, first_half, pass_env({}))]
    outcomes += [item.collect() if isinstance(item, Beside) else item for item in beside]
    if not fast and not extra:  # a developer's ARGS selection is not widened to the slow tests
        outcomes += [slow_pass(), learning_pass()]
    summary(outcomes)
    return 1 if any(outcome.failed for outcome in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
