"""SECRET_KEY is generated once into the data directory, owner-only, and reused."""
import stat

from controlplane.secret_key import load_or_create_secret_key


def test_key_is_generated_into_the_data_dir_with_owner_only_permissions(tmp_path):
    data_dir = tmp_path / "data"
    key = load_or_create_secret_key(data_dir)
    path = data_dir / "secret_key"
    assert len(key) >= 50
    assert path.read_text() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_key_is_reused_on_later_starts(tmp_path):
    first = load_or_create_secret_key(tmp_path)
    assert load_or_create_secret_key(tmp_path) == first


def test_an_existing_key_is_read_not_replaced(tmp_path):
    (tmp_path / "secret_key").write_text("kept-from-before\n")
    assert load_or_create_secret_key(tmp_path) == "kept-from-before"


def test_each_data_dir_gets_its_own_key(tmp_path):
    assert load_or_create_secret_key(tmp_path / "a") != load_or_create_secret_key(tmp_path / "b")
