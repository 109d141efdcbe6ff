"""Attacks on the command line's secrets: a token given as a flag (every user of the machine sees
it in `ps`, and it stays in the shell's history), a token file others can read, and a token sent
in the clear over plain http:// to another machine. Each is refused before anything touches the
network: the tests record every socket connection attempted, and none is (no traffic leaves)."""
import socket

import httpx
import pytest

from client.cli.main import main, parser

TOKEN = "3f1c9a7e5b2d4c6a8e0f1a2b3c4d5e6f7a8b9c0d"
FAR_AWAY = "http://203.0.113.7:8000"  # TEST-NET-3: documentation only, routed nowhere


@pytest.fixture
def connections(monkeypatch):
    """Every connection a socket attempts, refused before it leaves this process."""
    attempted = []

    def refuse(sock, address):
        attempted.append(address)
        raise OSError("the test refuses every connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempted


@pytest.fixture
def no_token(monkeypatch, tmp_path):
    monkeypatch.delenv("GRPO_TOKEN", raising=False)
    monkeypatch.setenv("GRPO_TOKEN_FILE", str(tmp_path / "token"))
    return tmp_path / "token"


def option_strings(command) -> list[str]:
    found = []
    for action in command._actions:
        found += action.option_strings
        for sub in getattr(action, "choices", None) or {}:
            if isinstance(action.choices, dict):
                found += option_strings(action.choices[sub])
    return found


@pytest.mark.parametrize("argv", [["--token", TOKEN, "runs", "list"], [f"--token={TOKEN}", "runs", "list"],
                                  ["runs", "list", "--token", TOKEN]])
def test_a_token_given_as_a_flag_is_refused_saying_where_it_goes(argv, no_token, connections, capsys):
    assert not [option for option in option_strings(parser()) if "token" in option]  # no flag takes one
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "shows in `ps`" in err and "GRPO_TOKEN" in err and f"chmod 600 {no_token}" in err
    assert TOKEN not in err
    assert connections == []


def test_a_token_file_others_may_read_is_refused(no_token, connections, capsys):
    no_token.write_text(TOKEN + "\n")
    no_token.chmod(0o644)
    assert main(["--url", "http://127.0.0.1:9", "runs", "list"]) == 2
    err = capsys.readouterr().err
    assert "may be read by other users (mode 644)" in err and f"chmod 600 {no_token}" in err
    assert TOKEN not in err
    assert connections == []


def test_plain_http_to_another_machine_is_refused_without_insecure(monkeypatch, connections, capsys):
    monkeypatch.setenv("GRPO_TOKEN", TOKEN)
    assert main(["--url", FAR_AWAY, "runs", "list"]) == 2
    err = capsys.readouterr().err
    assert "refusing to send the API token to 203.0.113.7 over plain http://" in err and "--insecure" in err
    assert connections == []


def test_with_insecure_the_request_is_made_as_asked(monkeypatch, capsys):
    """The control for the refusal above: with --insecure the same command sends its request (caught
    at httpx's transport here, so nothing leaves), with the token from the environment."""
    monkeypatch.setenv("GRPO_TOKEN", TOKEN)
    sent = []

    def answer(transport, request):
        sent.append(request)
        return httpx.Response(200, json={"results": []})

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", answer)
    assert main(["--url", FAR_AWAY, "--insecure", "runs", "list"]) == 0
    assert [(str(r.url), r.headers["Authorization"]) for r in sent] == [
        (f"{FAR_AWAY}/api/runs/?page=1", f"Token {TOKEN}")]
