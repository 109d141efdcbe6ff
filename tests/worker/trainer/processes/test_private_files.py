"""A file written for its owner alone: 0600 whatever the umask, whole or not at all, and never
through a link planted where it goes."""
import os
import stat

import pytest

from worker.trainer.processes.private_files import write_private


@pytest.fixture
def open_umask():
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_it_is_readable_by_its_owner_alone_under_any_umask(tmp_path, open_umask):
    write_private(tmp_path / "spec.json", "{}")
    assert stat.S_IMODE((tmp_path / "spec.json").stat().st_mode) == 0o600


def test_a_link_planted_at_its_name_is_replaced_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("theirs")
    (tmp_path / "spec.json").symlink_to(elsewhere)
    write_private(tmp_path / "spec.json", "ours")
    assert elsewhere.read_text() == "theirs" and not (tmp_path / "spec.json").is_symlink()
    assert (tmp_path / "spec.json").read_text() == "ours"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    (tmp_path / "spec.json").write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_private(tmp_path / "spec.json", "half \udc80 written")
    assert [p.name for p in tmp_path.iterdir()] == ["spec.json"]
    assert (tmp_path / "spec.json").read_text() == "old"
