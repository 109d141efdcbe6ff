"""The engine loads without Django: bench/diagnosis.py calls it on a run's events directly."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_importing_the_engine_loads_no_django():
    probe = "import sys, runs.diagnosis.engine; print(sorted(m for m in sys.modules if m.startswith('django')))"
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
