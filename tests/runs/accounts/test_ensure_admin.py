"""`manage.py ensure_admin`: the first admin is created once, its password printed and saved owner-only."""
import re
import stat
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command


@pytest.fixture
def data_dir(settings, tmp_path, monkeypatch):
    monkeypatch.delenv("ADMIN_USERNAME", raising=False)
    monkeypatch.delenv("ADMIN_PASSWORD", raising=False)
    settings.DATA_DIR = tmp_path
    return tmp_path


def ensure_admin() -> str:
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    return out.getvalue()


def printed_password(output: str) -> str:
    return re.search(r"password: (\S+)", output).group(1)


@pytest.mark.django_db
def test_first_call_creates_admin_and_prints_and_saves_the_password(data_dir):
    output = ensure_admin()
    password = printed_password(output)
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and admin.check_password(password)
    credentials = data_dir / "admin-credentials.txt"
    assert f"username: admin\npassword: {password}\n" in credentials.read_text()
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert str(credentials) in output


@pytest.mark.django_db
def test_second_call_changes_nothing_and_says_where_the_password_is(data_dir):
    password = printed_password(ensure_admin())
    saved = (data_dir / "admin-credentials.txt").read_text()
    output = ensure_admin()
    assert "password:" not in output
    assert "admin-credentials.txt" in output and "changepassword admin" in output
    assert get_user_model().objects.count() == 1
    assert get_user_model().objects.get().check_password(password)
    assert (data_dir / "admin-credentials.txt").read_text() == saved


@pytest.mark.django_db
def test_no_admin_is_added_when_a_superuser_exists(data_dir):
    get_user_model().objects.create_superuser("root", password="root-pass-123")
    output = ensure_admin()
    assert "root" in output and "changepassword root" in output
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not (data_dir / "admin-credentials.txt").exists()


@pytest.mark.django_db
def test_credentials_from_the_environment_are_used_and_not_written_out(data_dir, monkeypatch):
    monkeypatch.setenv("ADMIN_USERNAME", "boss")
    monkeypatch.setenv("ADMIN_PASSWORD", "a-long-given-pass-7")
    output = ensure_admin()
    boss = get_user_model().objects.get(username="boss")
    assert boss.is_superuser and boss.check_password("a-long-given-pass-7")
    assert "a-long-given-pass-7" not in output
    assert not (data_dir / "admin-credentials.txt").exists()


@pytest.mark.django_db
def test_an_existing_account_keeps_its_password_whatever_the_environment_says(data_dir, monkeypatch):
    get_user_model().objects.create_superuser("boss", password="changed-since-1")
    monkeypatch.setenv("ADMIN_USERNAME", "boss")
    monkeypatch.setenv("ADMIN_PASSWORD", "a-long-given-pass-7")
    output = ensure_admin()
    assert "not applied" in output
    assert get_user_model().objects.get(username="boss").check_password("changed-since-1")


@pytest.mark.django_db
def test_a_given_username_alone_gets_a_generated_password(data_dir, monkeypatch):
    monkeypatch.setenv("ADMIN_USERNAME", "boss")
    password = printed_password(ensure_admin())
    assert get_user_model().objects.get(username="boss").check_password(password)
    assert "username: boss\n" in (data_dir / "admin-credentials.txt").read_text()


@pytest.mark.django_db
def test_a_weak_given_password_is_refused(data_dir, monkeypatch):
    monkeypatch.setenv("ADMIN_PASSWORD", "short")
    with pytest.raises(CommandError, match="ADMIN_PASSWORD"):
        ensure_admin()
    assert not get_user_model().objects.exists()
