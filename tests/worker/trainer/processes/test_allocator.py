"""Choosing the trainer's allocator: which library, the re-executed environment, the server's."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from worker.trainer.processes import allocator
from worker.trainer.processes.allocator import (PRELOADED, SETTING, chosen_library, preload_environment,
                                      without_preloaded_allocator)

ROOT = Path(__file__).resolve().parents[4]


def test_auto_picks_the_first_library_that_exists(tmp_path):
    library = tmp_path / "libjemalloc.so.2"
    library.write_bytes(b"")
    assert chosen_library({}, candidates=[str(tmp_path / "missing.so"), str(library)]) == str(library)


def test_auto_without_jemalloc_keeps_the_system_allocator(tmp_path):
    assert chosen_library({}, candidates=[str(tmp_path / "missing.so")]) is None


def test_system_setting_never_preloads(tmp_path):
    library = tmp_path / "libjemalloc.so.2"
    library.write_bytes(b"")
    assert chosen_library({SETTING: "system"}, candidates=[str(library)]) is None


def test_a_named_library_that_does_not_exist_is_an_error_naming_the_setting(tmp_path):
    with pytest.raises(SystemExit, match=SETTING):
        chosen_library({SETTING: str(tmp_path / "nope.so")})


def test_preload_goes_first_and_keeps_what_was_preloaded():
    environ = preload_environment("/lib/jemalloc.so", {"LD_PRELOAD": "/lib/other.so", "HOME": "/h"})
    assert environ["LD_PRELOAD"] == "/lib/jemalloc.so:/lib/other.so"
    assert environ[PRELOADED] == "/lib/jemalloc.so"
    assert environ["HOME"] == "/h"


def test_no_second_reexec_once_preloaded():
    assert preload_environment("/lib/jemalloc.so", {"LD_PRELOAD": "/lib/jemalloc.so"}) is None
    # Even if the loader refused the library, the marker stops a loop of re-executions.
    assert preload_environment("/lib/jemalloc.so", {PRELOADED: "/lib/jemalloc.so"}) is None


def test_the_server_gets_the_preload_it_would_have_had():
    environ = {"LD_PRELOAD": "/lib/jemalloc.so:/lib/other.so", PRELOADED: "/lib/jemalloc.so"}
    assert without_preloaded_allocator(environ) == {"LD_PRELOAD": "/lib/other.so", PRELOADED: ""}
    assert without_preloaded_allocator({"LD_PRELOAD": "/lib/mine.so"}) == {}


def test_the_vllm_launch_environment_drops_the_trainers_allocator():
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.launch import build_launch

    environ = {"LD_PRELOAD": "/lib/jemalloc.so", PRELOADED: "/lib/jemalloc.so"}
    launch = build_launch("/models/m", TrainingConfig(), port=8000, device="cpu", environ=environ)
    assert launch.env["LD_PRELOAD"] == ""


@pytest.mark.skipif(allocator.chosen_library({}) is None, reason="no jemalloc on this machine")
def test_the_trainer_command_reexecutes_itself_with_jemalloc_loaded(tmp_path):
    """`python -m worker.trainer` with a spec it cannot read: it exits 2 after re-executing;
    a sitecustomize-free probe prints whether jemalloc is mapped into the process."""
    probe = ("import sys, runpy; sys.argv = ['worker.trainer', '--spec', sys.argv[1]];\n"
             "import atexit; atexit.register(lambda: print('MAPPED' if 'jemalloc' in open('/proc/self/maps').read() "
             "else 'NOT MAPPED'))\n"
             "runpy.run_module('worker.trainer', run_name='__main__', alter_sys=True)")
    environ = {key: value for key, value in os.environ.items() if key not in (SETTING, PRELOADED)}
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "missing.json")], cwd=ROOT, env=environ,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "cannot read the spec" in result.stderr
    assert "MAPPED" in result.stdout and "NOT MAPPED" not in result.stdout
