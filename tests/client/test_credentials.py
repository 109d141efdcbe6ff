"""The command line's token comes from GRPO_TOKEN or a file only its owner may read; plain http://
carries it only to this machine unless the user says otherwise."""
import pytest

from client.api import ControlPlane
from client.credentials import CredentialsError, check_url, is_local, read_token


def private_file(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_the_environment_wins_over_the_file(tmp_path):
    token_file = private_file(tmp_path / "token", "from-file\n")
    assert read_token({"GRPO_TOKEN": "from-env", "GRPO_TOKEN_FILE": str(token_file)}) == "from-env"
    assert read_token({"GRPO_TOKEN_FILE": str(token_file)}) == "from-file"


def test_the_file_is_found_under_the_users_config_folder(tmp_path):
    private_file(tmp_path / "grpo" / "token", "  kept  \n")
    assert read_token({"XDG_CONFIG_HOME": str(tmp_path)}) == "kept"


@pytest.mark.parametrize("mode, said", [(0o640, "mode 640"), (0o604, "mode 604"), (0o620, "mode 620")])
def test_a_file_group_or_others_may_touch_is_refused(tmp_path, mode, said):
    token_file = private_file(tmp_path / "token", "secret")
    token_file.chmod(mode)
    with pytest.raises(CredentialsError, match=f"{said}.*chmod 600 {token_file}"):
        read_token({"GRPO_TOKEN_FILE": str(token_file)})


def test_no_token_at_all_says_where_to_put_one(tmp_path):
    with pytest.raises(CredentialsError, match=f"set GRPO_TOKEN, or put the token alone in {tmp_path}/grpo/token"):
        read_token({"XDG_CONFIG_HOME": str(tmp_path)})
    private_file(tmp_path / "grpo" / "token", "\n")
    with pytest.raises(CredentialsError, match="is empty"):
        read_token({"XDG_CONFIG_HOME": str(tmp_path)})


@pytest.mark.parametrize("host, local", [("localhost", True), ("127.0.0.1", True), ("127.9.8.7", True),
                                         ("::1", True), ("10.0.0.5", False), ("grpo.example.org", False),
                                         ("localhost.example.org", False), ("0.0.0.0", False)])
def test_only_this_machine_is_local(host, local):
    assert is_local(host) is local


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://[::1]:8000/", "http://localhost",
                                 "https://grpo.example.org", "https://10.0.0.5:8443"])
def test_https_anywhere_and_http_here_are_taken(url):
    check_url(url)


@pytest.mark.parametrize("url, said", [("http://grpo.example.org", "over plain http://"),
                                       ("ftp://127.0.0.1", "not a control plane URL"),
                                       ("127.0.0.1:8000", "not a control plane URL")])
def test_other_urls_are_refused(url, said):
    with pytest.raises(CredentialsError, match=said):
        check_url(url)


def test_the_python_client_refuses_plain_http_elsewhere_unless_told():
    with pytest.raises(CredentialsError, match="--insecure"):
        ControlPlane("http://grpo.example.org", "secret")
    ControlPlane("http://grpo.example.org", "secret", insecure=True).close()
