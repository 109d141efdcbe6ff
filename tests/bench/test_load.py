"""bench/load.py's tiny mode runs against a real control plane and prints its table of targets.

The figures themselves are the bench's to print, not a test's to judge: what is checked is that
every target gets a row with a verdict, and that what the load did (uploads, dry runs, reports)
went through, which holds whatever the machine's speed. The embedded defaults' smoke run is
tests/bench/test_smoke.py's (with this check_table); PostgreSQL, Redis and a bucket are here.
"""
import subprocess
import sys

import pytest

from bench.load_server import problems_with_services
from tests.support.asgi_server import ROOT

TARGET_ROWS = ("ingest POST p99", "page load p99", "web processes' RSS growth", "checkpoint upload",
               "download throughput", "download cut off half-way")


def smoke(configuration: str) -> str:
    result = subprocess.run([sys.executable, "-m", "bench.load", "--smoke", "--only", configuration], cwd=ROOT,
                            capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def rows_of(output: str) -> dict[str, list[str]]:
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in output.splitlines()
             if line.startswith("| ")]
    return {row[0]: row[1:] for row in cells[1:]}


def check_table(output: str) -> None:
    rows = rows_of(output)
    for name in TARGET_ROWS:
        (target, measured, verdict), = [cells for row, cells in rows.items() if row.startswith(name)]
        assert target and measured and verdict in ("met", "**missed**"), (name, target, measured, verdict)
    upload = next(cells for row, cells in rows.items() if row.startswith("checkpoint upload"))
    assert upload[1].startswith("2/2 listed as the manifest says") and upload[2] == "met"
    assert "0 refused" in next(cells for row, cells in rows.items() if row.startswith("ingest"))[1]
    dry_runs = next(cells for row, cells in rows.items() if row.startswith("2 dry runs"))
    assert dry_runs[1].count("done in") == 2


@pytest.mark.slow
def test_the_tiny_load_on_postgresql_redis_and_a_bucket_prints_every_target_with_a_verdict():
    if problem := problems_with_services("postgresql://postgres@127.0.0.1:5432/postgres", "redis://127.0.0.1:6379"):
        pytest.skip(problem)
    check_table(smoke("production"))
