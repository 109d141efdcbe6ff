"""The trainer bounds oneDNN's primitive cache before it multiplies anything."""
import os
import subprocess
import sys
from pathlib import Path

from worker.trainer.onednn_cache import (CPU_BF16_ROW_MULTIPLE, SETTING, TRAINER_CAPACITY, bound_primitive_cache,
                                         row_width_multiple)

ROOT = Path(__file__).resolve().parents[3]


def test_the_cache_is_bounded_when_nothing_is_set():
    environ = {}
    bound_primitive_cache(environ)
    assert environ == {SETTING: str(TRAINER_CAPACITY)}


def test_a_capacity_set_by_hand_is_kept():
    environ = {SETTING: "1024"}
    bound_primitive_cache(environ)
    assert environ[SETTING] == "1024"


def test_the_trainer_command_runs_with_the_cache_bounded(tmp_path):
    """`python -m worker.trainer` with a spec it cannot read exits 2; the probe prints the
    setting the (re-executed) process ran with."""
    probe = ("import os, sys, runpy, atexit; sys.argv = ['worker.trainer', '--spec', sys.argv[1]]\n"
             f"atexit.register(lambda: print('CAPACITY', os.environ.get({SETTING!r})))\n"
             "runpy.run_module('worker.trainer', run_name='__main__', alter_sys=True)")
    environ = {key: value for key, value in os.environ.items() if key != SETTING}
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "missing.json")], cwd=ROOT, env=environ,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"CAPACITY {TRAINER_CAPACITY}" in result.stdout


def test_rows_are_padded_only_for_bf16_on_a_cpu():
    assert row_width_multiple(training_on_gpu=False, bf16=True) == CPU_BF16_ROW_MULTIPLE
    assert row_width_multiple(training_on_gpu=False, bf16=False) == 1
    assert row_width_multiple(training_on_gpu=True, bf16=True) == 1
