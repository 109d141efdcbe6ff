"""`grpo rewards` against a live control plane: a judge made from flags with its API key read from
a file (stored encrypted, never printed, reaching the run's worker alone), a reward model from a
JSON file, a key passed as a flag refused without echoing it, the API's refusals exiting 1 and a
local file that cannot be used exiting 2."""
import json

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main
from tests.support.asgi_server import SEED_RUN, AsgiServer

KEY = "sk-cli-judge-key-0123456789abcdef"
API_TOKEN = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
print(json.dumps({"key": Token.objects.create(user=get_user_model().objects.get(username="owner")).key}))
"""
STORED = """
import json
from runs.models import RewardFunction
from runs.rewards.secrets import unseal_api_key
reward = RewardFunction.objects.get(pk={pk})
print(json.dumps({{"sealed": reward.api_key_sealed, "opened": unseal_api_key(reward.api_key_sealed)}}))
"""
JUDGE_THE_SEEDED_RUN = """
import json
from runs.models import Run, RunReward
run = Run.objects.get(pk={run_id})
RunReward.objects.create(run=run, reward_function_id={pk})
print(json.dumps({{}}))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with AsgiServer(tmp_path_factory.mktemp("cp")) as live:
        live.seeded = {**live.shell_json(SEED_RUN), **live.shell_json(API_TOKEN)}
        yield live


def grpo(server, capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv), api=ControlPlane(server.url, server.seeded["key"]))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def key_file(tmp_path):
    path = tmp_path / "judge.key"
    path.write_text(KEY + "\n")
    path.chmod(0o600)
    return path


def test_a_judge_with_a_key_file_is_created_its_key_stored_sealed_and_never_printed(server, capsys, key_file):
    code, out, err = grpo(server, capsys, "rewards", "create", "--name", "strict", "--kind", "judge",
                          "--template", "Is {completion} a right answer to {prompt}? Score 0-10.",
                          "--model", "gpt-4o-mini", "--base-url", "https://api.example.org/v1",
                          "--set", "limits.max_concurrency=4", "--api-key-file", str(key_file))
    assert code == 0, err
    assert "created: judge score by gpt-4o-mini (https://api.example.org/v1) (API key stored)" in out
    pk = int(out.split()[1])
    stored = server.shell_json(STORED.format(pk=pk))
    assert stored["opened"] == KEY and KEY not in stored["sealed"]
    code, out, _ = grpo(server, capsys, "rewards", "show", str(pk), "--json")
    shown = json.loads(out)
    assert shown["api_key_set"] is True and shown["params"]["limits"]["max_concurrency"] == 4 and KEY not in out
    code, out, _ = grpo(server, capsys, "rewards", "list")
    [row] = [line for line in out.splitlines() if line.startswith(f"{pk} ")]
    assert row.split()[:3] == [str(pk), "strict", "judge"] and row.endswith("  set")

    # The run's worker, with the run's token, gets it; the server's log never shows it.
    server.shell_json(JUDGE_THE_SEEDED_RUN.format(run_id=server.seeded["run_id"], pk=pk))
    answer = httpx.get(f"{server.url}/api/runs/{server.seeded['run_id']}/secrets/",
                       headers={"Authorization": f"Bearer {server.seeded['token']}"})
    assert answer.status_code == 200 and answer.json() == {"api_keys": {"strict": KEY}}
    assert KEY not in server.log_path.read_text()


def test_a_key_given_as_a_flag_is_refused_without_echoing_it(server, capsys):
    for argv in (["--api-key", KEY], [f"--api-key={KEY}"]):
        code, out, err = grpo(server, capsys, "rewards", "create", "--name", "x", "--kind", "judge", *argv)
        assert code == 2 and "--api-key-file" in err and KEY not in out + err


def test_the_key_comes_from_the_environment_for_an_endpoint_judge(server, capsys, monkeypatch):
    monkeypatch.setenv("GRPO_JUDGE_API_KEY", KEY)
    code, out, err = grpo(server, capsys, "rewards", "create", "--name", "from-env", "--kind", "judge",
                          "--template", "Rate {completion}.", "--model", "m", "--base-url", "https://judge.example.org/v1")
    assert code == 0 and "(API key stored)" in out, err
    pk = out.split()[1]
    assert server.shell_json(STORED.format(pk=int(pk)))["opened"] == KEY
    # Changed later: a param set on top of the others, the key forgotten.
    code, out, err = grpo(server, capsys, "rewards", "update", pk, "--set", "limits.max_concurrency=2",
                          "--clear-api-key", "--json")
    changed = json.loads(out)
    assert code == 0 and changed["api_key_set"] is False, err
    assert (changed["params"]["limits"]["max_concurrency"], changed["params"]["template"]) == (2, "Rate {completion}.")
    # A served judge is sent no key, even with one in the environment.
    code, out, err = grpo(server, capsys, "rewards", "create", "--name", "served", "--kind", "judge", "--mode",
                          "choice", "--template", "Is {completion} polite?", "--model", "Qwen/Qwen2.5-0.5B-Instruct",
                          "--label", "yes=1", "--label", "no=0")
    assert code == 0 and "API key" not in out, err


def test_a_reward_model_from_a_params_file_is_shown_with_its_defaults(server, capsys, tmp_path):
    params = tmp_path / "rm.json"
    params.write_text(json.dumps({"model": "org/rm-small", "sigmoid": True}))
    code, out, err = grpo(server, capsys, "rewards", "create", "--name", "rm", "--kind", "reward_model",
                          "--params-file", str(params), "--set", "batch_size=16")
    assert code == 0, err
    code, out, _ = grpo(server, capsys, "rewards", "show", out.split()[1])
    assert "reward_model org/rm-small" in out and '"batch_size": 16' in out and '"max_length": 1024' in out


def test_refused_params_exit_1_and_unreadable_files_exit_2_saying_why(server, capsys, tmp_path):
    code, _, err = grpo(server, capsys, "rewards", "create", "--name", "bad", "--kind", "judge",
                        "--template", "Rate {prompt}.", "--model", "/etc")
    assert code == 1 and err.startswith("refused: HTTP 400: params: ") and "{completion}" in err
    code, _, err = grpo(server, capsys, "rewards", "create", "--name", "bad", "--kind", "judge",
                        "--api-key-file", str(tmp_path / "missing.key"))
    assert code == 2 and "--api-key-file" in err and "missing.key" in err
    (tmp_path / "list.json").write_text("[1, 2]")
    code, _, err = grpo(server, capsys, "rewards", "create", "--name", "bad", "--kind", "reward_model",
                        "--params-file", str(tmp_path / "list.json"))
    assert code == 2 and "not an object" in err


def test_a_reward_is_deleted(server, capsys):
    code, out, _ = grpo(server, capsys, "rewards", "create", "--name", "short", "--kind", "builtin",
                        "--builtin", "length", "--json")
    pk = json.loads(out)["id"]
    assert grpo(server, capsys, "rewards", "delete", str(pk))[1].strip() == f"reward {pk} deleted"
    code, _, err = grpo(server, capsys, "rewards", "show", str(pk))
    assert code == 1 and "404" in err
