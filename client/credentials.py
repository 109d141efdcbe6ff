"""Where the command line finds its API token and whom it may send it to.

A token is a password: on the command line it would show in `ps` to every user of the machine
and stay in the shell's history, so it is read from GRPO_TOKEN or from a file only its owner can
read, never from a flag. Sent over plain http:// it crosses the network readable, so that is
done only to this machine unless the user says --insecure.
"""
import ipaddress
import os
import stat
from pathlib import Path
from urllib.parse import urlsplit

TOKEN_FLAG_REFUSAL = ("--token is not taken: a token on the command line shows in `ps` and the shell's history. "
                      "Set GRPO_TOKEN, or put the token alone in {path} (chmod 600 {path}), or in a file "
                      "GRPO_TOKEN_FILE names")


class CredentialsError(Exception):
    """What is wrong with the token or the URL, and what to do about it."""


def token_file(environ) -> Path:
    """GRPO_TOKEN_FILE, else $XDG_CONFIG_HOME/grpo/token (~/.config/grpo/token)."""
    if environ.get("GRPO_TOKEN_FILE"):
        return Path(environ["GRPO_TOKEN_FILE"]).expanduser()
    config = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "grpo" / "token"


def names_token_flag(argv: list[str]) -> bool:
    return any(arg == "--token" or arg.startswith("--token=") for arg in argv)


def read_token(environ=None) -> str:
    """The token from GRPO_TOKEN, else from the token file, refused if others may read it."""
    environ = os.environ if environ is None else environ
    if token := environ.get("GRPO_TOKEN", "").strip():
        return token
    path = token_file(environ)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CredentialsError(f"no API token: set GRPO_TOKEN, or put the token alone in {path} (chmod 600 "
                               f"{path}), or in a file GRPO_TOKEN_FILE names") from None
    _check_private(path, info)
    token = path.read_text().strip()
    if not token:
        raise CredentialsError(f"{path} is empty; put the API token in it")
    return token


def _check_private(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise CredentialsError(f"{path} is not a file; put the API token alone in a file there")
    if info.st_uid != os.getuid():
        raise CredentialsError(f"{path} belongs to another user; keep the token in a file of your own")
    if info.st_mode & 0o077:
        raise CredentialsError(f"{path} may be read by other users (mode {stat.S_IMODE(info.st_mode):03o}); "
                               f"the token in it is a password. Run: chmod 600 {path}")


def is_local(host: str) -> bool:
    """This machine: localhost, 127.0.0.0/8 or ::1 (traffic that never leaves it)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, insecure: bool = False) -> None:
    """Refuses a URL the token should not be sent to: not http(s), or plain http to another machine."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CredentialsError(f"{url!r} is not a control plane URL such as https://grpo.example.org")
    if parts.scheme == "http" and not insecure and not is_local(parts.hostname):
        raise CredentialsError(
            f"refusing to send the API token to {parts.hostname} over plain http://: anyone on the network "
            "between could read it and act as you. Use https://, or add --insecure (insecure=True in "
            "Python) if that network is trusted")
