"""Make sure someone can log in: create the first admin account once, and say how to log in.

`make run` calls this on every start. With ADMIN_USERNAME / ADMIN_PASSWORD set,
that account is created if it does not exist. Otherwise, if there is no
superuser yet, `admin` is created with a random password, which is printed and
saved to DATA_DIR/admin-credentials.txt (mode 0600) for whoever missed it.
An existing account is never changed: a password lingering in the environment
must not silently undo a password changed since.
"""
import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

DEFAULT_USERNAME = "admin"
CHANGE_PASSWORD = ".venv/bin/python manage.py changepassword {username}"


def credentials_path() -> Path:
    return Path(settings.DATA_DIR) / "admin-credentials.txt"


def write_credentials(username: str, password: str) -> Path:
    path = credentials_path()
    # Created owner-only from the start; fchmod also tightens a file left by an older run.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("# The first admin account of this GRPO control plane (made by `manage.py ensure_admin`).\n"
                  "# Not updated when the password changes; set a new one with:\n"
                  f"#   {CHANGE_PASSWORD.format(username=username)}\n"
                  f"username: {username}\npassword: {password}\n")
    return path


def credentials_file_names(username: str) -> bool:
    path = credentials_path()
    return path.exists() and f"username: {username}\n" in path.read_text(encoding="utf-8")


class Command(BaseCommand):
    help = "Create the first admin account if there is none, and print how to log in."

    def handle(self, *args, **options):
        username = os.environ.get("ADMIN_USERNAME", "").strip() or DEFAULT_USERNAME
        password = os.environ.get("ADMIN_PASSWORD", "")
        explicit = bool(os.environ.get("ADMIN_USERNAME", "").strip() or password)
        users = get_user_model().objects
        existing = users.filter(username=username).first()
        if existing is None and not explicit:
            existing = users.filter(is_superuser=True).order_by("pk").first()
        if existing is not None:
            self.report_existing(existing, password_ignored=bool(password))
        elif password:
            self.create_with_given_password(username, password)
        else:
            self.create_with_generated_password(username)

    def create_with_given_password(self, username: str, password: str) -> None:
        model = get_user_model()
        try:
            validate_password(password, user=model(username=username))
        except ValidationError as exc:
            raise CommandError(f"ADMIN_PASSWORD is not acceptable: {' '.join(exc.messages)}") from None
        model.objects.create_superuser(username=username, email="", password=password)
        self.say(self.style.SUCCESS(f"Admin account created: {username} (password from ADMIN_PASSWORD)."))

    def create_with_generated_password(self, username: str) -> None:
        password = secrets.token_urlsafe(12)
        get_user_model().objects.create_superuser(username=username, email="", password=password)
        path = write_credentials(username, password)
        self.say(self.style.SUCCESS("Admin account created. Log in with:"),
                 f"  username: {username}",
                 f"  password: {password}",
                 f"Saved to {path} (readable only by you).",
                 f"Change it with: {CHANGE_PASSWORD.format(username=username)}")

    def report_existing(self, user, password_ignored: bool) -> None:
        role = "Admin account" if user.is_superuser else "Account (not an administrator)"
        lines = [f"{role}: {user.username} (exists already)."]
        if password_ignored:
            lines.append("ADMIN_PASSWORD is used only when the account is created; it was not applied.")
        if credentials_file_names(user.username):
            lines.append(f"Its first password is in {credentials_path()} (unless changed since).")
        lines.append(f"Forgot the password? {CHANGE_PASSWORD.format(username=user.username)}")
        self.say(*lines)

    def say(self, *lines: str) -> None:
        self.stdout.write("\n".join(lines))
