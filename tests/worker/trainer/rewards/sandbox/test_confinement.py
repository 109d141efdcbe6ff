"""Where the kernel has Landlock: the control plane's files, other processes and TCP are out of reach."""
import os
from pathlib import Path

import pytest

from tests.support.sandbox import call, reward_source
from worker.trainer.rewards.sandbox import SandboxError


@pytest.fixture(scope="module")
def confined(pool):
    if not pool.confinement.startswith("landlock"):
        pytest.skip(f"no Landlock on this kernel ({pool.confinement})")
    return pool


def test_a_file_of_the_control_plane_cannot_be_read(confined, tmp_path):
    secret = tmp_path / "secret_key"
    secret.write_text("hunter2")
    with pytest.raises(SandboxError) as raised:
        call(confined, reward_source(f"return [len(open({str(secret)!r}).read())] * 2"))
    assert raised.value.kind == "exception" and "PermissionError" in raised.value.message


def test_the_parents_environment_in_proc_cannot_be_read(confined):
    with pytest.raises(SandboxError) as raised:
        call(confined, reward_source(f"return [len(open('/proc/{os.getpid()}/environ').read())] * 2"))
    assert "PermissionError" in raised.value.message


def test_tcp_connections_are_refused(confined):
    if "tcp refused" not in confined.confinement:
        pytest.skip("this kernel's Landlock does not cover TCP")
    with pytest.raises(SandboxError) as raised:
        call(confined, reward_source("socket.create_connection(('127.0.0.1', 5432), timeout=2)\nreturn [0, 0]",
                                     imports="import socket"))
    assert "PermissionError" in raised.value.message


def test_installed_libraries_still_import(confined):
    # The Python installation stays readable: rewards may use what the environment has.
    source = reward_source("return [float(len(re.findall(r'\\d', c))) for c in completions]", imports="import re, json")
    assert call(confined, source, completions=["12", "x"]).values == [2.0, 0.0]
    assert Path(__file__).exists()
