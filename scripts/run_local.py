"""Start the control plane on this machine: migrate, make sure an admin exists,
then run the ASGI server, a Celery worker for the run pools and a consumer of the
control plane's own queue until Ctrl-C or SIGTERM.

The server runs WEB_PROCESSES uvicorn processes, more than one only with a shared channel layer
(REDIS_URL). Called by `make run` (and `make worker`, with --worker-only) after the Makefile has
installed the requirements; this script installs nothing. It runs with the venv's python and
starts every child with that same interpreter, each in a session (process group) of its own, so
that Ctrl-C reaches only this launcher, which stops the children in order and kills what is left
of each group. Details: docs/getting-started.md#make-run, docs/deploying/services.md#several-web-processes.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from worker.trainer.processes.groups import kill_process_group

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 90
STOP_GRACE_S = 15
POLL_S = 0.2
# runs.background.names.QUEUES, spelled out: importing runs would import Django into the launcher.
# The control plane's own work (checkpoint finishing) first, then the work users start.
BACKGROUND_QUEUE = "controlplane"
BACKGROUND_QUEUES = f"{BACKGROUND_QUEUE},controlplane-user"

stop_signals: list[int] = []


def request_stop(signum, _frame) -> None:
    stop_signals.append(signum)


def install_signal_handlers() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, request_stop)


def load_env_file(path: Path | None) -> None:
    """Values from .env fill in what the environment (or `make VAR=...`) leaves unset."""
    if path is None or not path.exists():
        return
    from dotenv import load_dotenv  # installed with uvicorn[standard]

    load_dotenv(path, override=False)
    print(f"Loaded settings from {path}", flush=True)


def data_dir() -> Path:
    """DATA_DIR as settings.py resolves it: relative to the project root."""
    path = Path(os.environ.get("DATA_DIR") or "var").expanduser()
    return path if path.is_absolute() else (ROOT / path).resolve()


def display_host(host: str) -> str:
    """Where a browser on this machine reaches a server bound to `host`."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def check_port_free(host: str, port: int) -> None:
    # Fail before migrating, with a message that says what to do, rather than
    # after a screen of uvicorn's traceback.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SystemExit(f"Cannot listen on {host}:{port} ({exc.strerror}). "
                             f"Is the control plane already running? Pick another port with PORT=...") from None


def manage(*args: str, capture: bool = False) -> str:
    """Run a manage.py command in the foreground; stop the launcher if it fails."""
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT,
                            stdout=subprocess.PIPE if capture else None, text=True)
    if result.returncode != 0:
        if stop_signals:  # Ctrl-C reached the command too: a requested stop, not a failure
            raise SystemExit(0)
        raise SystemExit(f"manage.py {' '.join(args)} failed with exit code {result.returncode}")
    return result.stdout or ""


def die_with_parent() -> None:
    # Linux only: if the launcher itself is killed with SIGKILL it cannot clean
    # up, so ask the kernel to send the child SIGTERM when the launcher dies.
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start(name: str, args: list[str]) -> subprocess.Popen:
    print(f"Starting {name}: {' '.join(args)}", flush=True)
    child = subprocess.Popen([sys.executable, *args], cwd=ROOT, start_new_session=True,
                             preexec_fn=die_with_parent if sys.platform == "linux" else None)
    child.name = name
    return child


def server_args(host: str, port: int, processes: int = 1) -> list[str]:
    workers = ["--workers", str(processes)] if processes > 1 else []
    return ["-m", "uvicorn", "controlplane.asgi:application", "--host", host, "--port", str(port),
            "--timeout-graceful-shutdown", "5", *workers]


def worker_args(queues: str) -> list[str]:
    return ["-m", "celery", "-A", "worker.celery_app", "worker", "-Q", queues,
            "--concurrency", "1", "--loglevel", "INFO"]


def consumer_args(concurrency: int) -> list[str]:
    """The consumer of the control plane's own queue (runs.background): pushes, checks, finalising.
    Named apart from the run worker (celery@host) so that the two never pass for one another."""
    return ["-m", "celery", "-A", "controlplane.celery", "worker", "-Q", BACKGROUND_QUEUES,
            "-n", f"{BACKGROUND_QUEUE}@%h", "--concurrency", str(concurrency), "--loglevel", "INFO"]


def exited(children: list[subprocess.Popen]) -> subprocess.Popen | None:
    return next((child for child in children if child.poll() is not None), None)


def wait_until_serving(url: str, children: list[subprocess.Popen]) -> bool:
    """True once the server answers HTTP; False on a stop request, a dead child or timeout."""
    # Straight to our own server, whatever http_proxy says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline and not stop_signals and not exited(children):
        try:
            with opener.open(url + "login/", timeout=2):
                return True
        except urllib.error.HTTPError:
            return True  # any HTTP answer means the server is up
        except OSError:
            time.sleep(0.5)
    if time.monotonic() >= deadline:
        print(f"The server did not answer at {url} within {STARTUP_TIMEOUT_S} s.", file=sys.stderr)
    return False


def stop(children: list[subprocess.Popen]) -> None:
    """SIGTERM each child, give them STOP_GRACE_S together, then SIGKILL each whole group.

    Only the group leaders get SIGTERM: Celery's pool processes are shut down by
    their parent, and a direct signal would only make it log them as lost.
    A second Ctrl-C skips the wait.
    """
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    signals_before = len(stop_signals)
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and len(stop_signals) == signals_before:
        if all(child.poll() is not None for child in children):
            break
        time.sleep(POLL_S)
    for child in children:
        kill_process_group(child)  # also kills pool processes left orphaned


def supervise(children: list[subprocess.Popen]) -> int:
    """Wait for a stop request (exit 0) or for a child to die (exit 1)."""
    while not stop_signals:
        dead = exited(children)
        if dead:
            print(f"{dead.name} exited with code {dead.returncode}; stopping the rest.", file=sys.stderr)
            return 1
        time.sleep(POLL_S)
    return 0


def banner(lines: list[str]) -> None:
    rule = "=" * 72
    print("\n".join(["", rule, *lines, rule, ""]), flush=True)


def redact(url: str) -> str:
    """A broker URL without its password, for printing."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return f"{scheme}{sep}{userinfo.split(':', 1)[0]}:***@{host}"


def run_children(children_spec: list[tuple[str, list[str]]], ready_url: str | None, ready_lines: list[str]) -> int:
    children: list[subprocess.Popen] = []
    try:
        for name, args in children_spec:
            children.append(start(name, args))
        if ready_url and not wait_until_serving(ready_url, children):
            return 0 if stop_signals else 1
        banner(ready_lines)
        return supervise(children)
    finally:
        print("Stopping ...", flush=True)
        stop(children)
        print("Stopped.", flush=True)


def web_processes_line(processes: int) -> str:
    if processes > 1:
        return f"  Web processes: {processes} (channel layer: Redis, shared by all of them)"
    why = "" if os.environ.get("REDIS_URL") else " (the in-memory channel layer works within one process)"
    return f"  Web processes: 1{why}"


def run_control_plane(host: str, port: int, queues: str, processes: int, concurrency: int) -> int:
    url = f"http://{display_host(host)}:{port}/"
    # The worker reports back to PUBLIC_URL; default it to where this server listens
    # (an empty value, as a copied .env.example may leave, counts as unset).
    if not os.environ.get("PUBLIC_URL"):
        os.environ["PUBLIC_URL"] = url.rstrip("/")
    check_port_free(host, port)
    manage("migrate", "--noinput")
    admin_notice = manage("ensure_admin", capture=True)
    if stop_signals:
        return 0
    ready = [f"  GRPO control plane is ready: {url}", "",
             *[f"  {line}" for line in admin_notice.strip().splitlines()], "",
             f"  API docs: {url}api/docs/    Data: {data_dir()}",
             web_processes_line(processes),
             f"  Worker queues: {queues}",
             f"  Background consumer: queue {BACKGROUND_QUEUE} (checkpoint finalising) and queue controlplane-user "
             f"(Hub pushes, dataset checks, model-played dry runs), {concurrency} at a time",
             "  Stop with Ctrl-C."]
    children = [("server", server_args(host, port, processes)), ("worker", worker_args(queues)),
                ("consumer", consumer_args(concurrency))]
    return run_children(children, url, ready)


def run_worker_only(queues: str) -> int:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker:
        print("CELERY_BROKER_URL is not set: using the filesystem broker under DATA_DIR, which only "
              "reaches a control plane on this machine with the same DATA_DIR.", file=sys.stderr)
    ready = [f"  Celery worker started for queues: {queues}",
             f"  Broker: {redact(broker) if broker else 'filesystem (DATA_DIR/broker)'}",
             "  Stop with Ctrl-C."]
    return run_children([("worker", worker_args(queues))], None, ready)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker-only", action="store_true", help="start only a Celery worker")
    parser.add_argument("--env-file", type=Path, default=ROOT / ".env",
                        help="settings file to load (default: .env in the project root)")
    parser.add_argument("--no-env-file", action="store_true", help="do not load any settings file")
    return parser.parse_args(argv)


def port_from_env() -> int:
    raw = os.environ.get("PORT") or "8000"
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise SystemExit(f"PORT={raw!r} is not a TCP port number")
    return int(raw)


def queues_from_env() -> str:
    raw = os.environ.get("QUEUES") or "default"
    if any(not name.strip() for name in raw.split(",")):
        raise SystemExit(f"QUEUES={raw!r} has an empty name; separate queue names with single commas")
    return raw


def positive_int_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name) or str(default)
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"{name}={raw!r} is not a whole number of at least 1")
    return int(raw)


def web_processes_from_env() -> int:
    """WEB_PROCESSES, by default min(4, cores) with Redis and 1 without; more than 1 needs REDIS_URL."""
    redis = bool(os.environ.get("REDIS_URL"))
    processes = positive_int_from_env("WEB_PROCESSES", min(4, os.cpu_count() or 1) if redis else 1)
    if processes > 1 and not redis:
        raise SystemExit(f"WEB_PROCESSES={processes} needs REDIS_URL: without it the channel layer is in memory, "
                         "inside one process, and live pages served by one process would miss what reaches "
                         "another. Set REDIS_URL=redis://... or leave WEB_PROCESSES at 1.")
    return processes


def main(argv: list[str]) -> int:
    install_signal_handlers()
    options = parse_args(argv)
    load_env_file(None if options.no_env_file else options.env_file)
    queues = queues_from_env()
    if options.worker_only:
        return run_worker_only(queues)
    return run_control_plane(os.environ.get("HOST") or "127.0.0.1", port_from_env(), queues,
                             web_processes_from_env(), positive_int_from_env("BACKGROUND_CONCURRENCY", 2))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
