"""bench/load.py's tiny mode runs against a real control plane and prints its table of targets.

The figures themselves are the bench's to print, not a test's to judge: what is checked is that
every target gets a row with a verdict, and that what the load did (uploads, dry runs, reports)
went through, which holds whatever the machine's speed. The embedded defaults' smoke run is
tests/bench/test_smoke.py's (both check the table with tests/support/bench_tables.py's
check_load_table); PostgreSQL, Redis and a bucket are here.
"""
import subprocess
import sys

import pytest

from bench.load_server import problems_with_services
from tests.support.asgi_server import ROOT
from tests.support.bench_tables import check_load_table


def smoke(configuration: str) -> str:
    result = subprocess.run([sys.executable, "-m", "bench.load", "--smoke", "--only", configuration], cwd=ROOT,
                            capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_the_tiny_load_on_postgresql_redis_and_a_bucket_prints_every_target_with_a_verdict():
    if problem := problems_with_services("postgresql://postgres@127.0.0.1:5432/postgres", "redis://127.0.0.1:6379"):
        pytest.skip(problem)
    check_load_table(smoke("production"))
