"""Attempt folders in /dev/shm claimed by a lock: a killed owner's is removed by the next attempt,
a living owner's never (worker/shared_memory_folders.py). Under tmp_path: the rule is the same."""
import os
import subprocess
import sys

import pytest

import worker.shared_memory_folders as folders
from worker.shared_memory_folders import LOCK_NAME, ClaimedFolder, remove_orphans

# Claims a folder the way the supervisor does, writes a weight file in it, says where, and is
# killed with SIGKILL: nothing of it runs after.
KILLED_OWNER = ("import os, pathlib, signal, sys; from worker.shared_memory_folders import ClaimedFolder; "
                "claim = ClaimedFolder.make('grpo-run-3-attempt-1-', pathlib.Path(sys.argv[1])); folder = claim.path; "
                "(folder / 'model.safetensors').write_bytes(b'x' * 1024); print(folder, flush=True); "
                "os.kill(os.getpid(), signal.SIGKILL)")


@pytest.fixture(autouse=True)
def settled(monkeypatch):
    monkeypatch.setattr(folders, "SETTLE_S", 0.0)


def test_a_killed_owners_folder_is_removed_by_the_next_sweep(tmp_path):
    result = subprocess.run([sys.executable, "-c", KILLED_OWNER, str(tmp_path)], capture_output=True, text=True,
                            cwd=os.getcwd())
    assert result.returncode == -9, result.stderr
    left = tmp_path / result.stdout.strip().rsplit("/", 1)[-1]
    assert (left / "model.safetensors").exists()
    assert remove_orphans(tmp_path) == [left] and not left.exists()


def test_a_living_owners_folder_is_kept_until_it_lets_go(tmp_path):
    claimed = ClaimedFolder.make("grpo-run-4-attempt-2-", tmp_path)
    folder = claimed.path
    assert remove_orphans(tmp_path) == [] and folder.exists()
    claimed.lock.close()
    assert remove_orphans(tmp_path) == [folder] and not folder.exists()


def test_folders_without_a_lock_or_of_another_name_are_left_alone(tmp_path):
    (tmp_path / "grpo-run-5-attempt-1-old").mkdir()  # made before folders were claimed
    (tmp_path / "PostgreSQL.1234").write_text("not ours")
    assert remove_orphans(tmp_path) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["PostgreSQL.1234", "grpo-run-5-attempt-1-old"]


def test_a_lock_just_made_is_not_taken_for_an_orphan(tmp_path, monkeypatch):
    monkeypatch.setattr(folders, "SETTLE_S", 30.0)
    folder = tmp_path / "grpo-run-6-attempt-1-new"
    folder.mkdir()
    (folder / LOCK_NAME).write_text("")  # its maker has not taken the lock yet
    assert remove_orphans(tmp_path) == [] and folder.exists()


def test_a_link_named_like_an_attempt_folder_is_not_followed(tmp_path):
    """/dev/shm is shared: a link another user plants there must not lead the sweep elsewhere."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    claimed = ClaimedFolder.make("grpo-run-7-attempt-1-", elsewhere)
    claimed.lock.close()  # an orphan, but not under the swept folder
    shm = tmp_path / "shm"
    shm.mkdir()
    (shm / "grpo-run-7-attempt-1-link").symlink_to(claimed.path)
    assert remove_orphans(shm) == [] and claimed.path.exists()
