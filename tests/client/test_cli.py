"""`./grpo` against a live control plane: upload a dataset, create, start, cancel and list runs,
watch one to its end, and say why a request was refused."""
import os
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main
from tests.support.asgi_server import SEED_RUN, AsgiServer

ROOT = Path(__file__).resolve().parents[2]
API_TOKEN = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from runs.models import RewardFunction
owner = get_user_model().objects.get(username="owner")
print(json.dumps({"key": Token.objects.create(user=owner).key, "reward": RewardFunction.objects.get().pk}))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cp")
    with AsgiServer(folder) as live:
        live.seeded = {**live.shell_json(SEED_RUN), **live.shell_json(API_TOKEN)}
        yield live


def grpo(server, capsys, *argv) -> tuple[int, str, str]:
    api = ControlPlane(server.url, server.seeded["key"])
    code = main(list(argv), api=api)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_dataset_uploaded_and_a_run_made_started_and_cancelled_from_the_shell(server, capsys, tmp_path):
    data = tmp_path / "sums.jsonl"
    data.write_text("".join(f'{{"prompt": "What is {i} + {i}?", "answer": "{2 * i}"}}\n' for i in range(20)))
    code, out, _ = grpo(server, capsys, "datasets", "upload", str(data))
    assert code == 0 and "'sums': 20 rows (jsonl)" in out
    dataset_id = int(out.split()[1])
    code, out, _ = grpo(server, capsys, "runs", "create", "--name", "from-the-shell", "--dataset", str(dataset_id),
                        "--reward", str(server.seeded["reward"]), "--set", "max_steps=5", "--set", "beta=0.01")
    assert code == 0 and "created (created)" in out
    run_id = int(out.split()[1])
    assert grpo(server, capsys, "runs", "start", str(run_id))[1].strip().endswith(": queued")
    code, out, _ = grpo(server, capsys, "runs", "list")
    listed = [line.split() for line in out.splitlines()]
    assert listed[0] == ["id", "name", "status", "step"] and [str(run_id), "from-the-shell", "queued", "0/5"] in listed
    assert grpo(server, capsys, "runs", "cancel", str(run_id))[0] == 0


def test_a_run_made_from_the_shell_is_evaluated_on_another_dataset_by_its_own_judges(server, capsys, tmp_path):
    data = tmp_path / "held.jsonl"
    data.write_text("".join(f'{{"prompt": "What is {i} * 2?", "answer": "{2 * i}"}}\n' for i in range(8)))
    held = int(grpo(server, capsys, "datasets", "upload", str(data))[1].split()[1])
    reward = str(server.seeded["reward"])
    code, out, _ = grpo(server, capsys, "runs", "create", "--name", "judged", "--dataset", str(held),
                        "--reward", reward, "--eval-dataset", str(held), "--eval-reward", reward,
                        "--set", "eval_steps=5")
    assert code == 0, out
    run = ControlPlane(server.url, server.seeded["key"]).run(int(out.split()[1]))
    assert run["eval_dataset"] == held and [r["reward_function"] for r in run["eval_rewards"]] == [int(reward)]


def test_a_refused_request_says_why_in_one_line_and_exits_1(server, capsys):
    code, _, err = grpo(server, capsys, "runs", "resume", str(server.seeded["run_id"]))
    assert code == 1 and err.startswith("refused: HTTP 409: ") and "only failed, cancelled or lost" in err
    code, _, err = grpo(server, capsys, "runs", "create", "--name", "x", "--dataset", "999999", "--reward", "1")
    assert code == 1 and "dataset: " in err and len(err.strip().splitlines()) == 1


ENDED_WITH_A_CHECKPOINT = """
import json
from django.utils import timezone
from runs.models import Checkpoint, Run, RunReward
seed = Run.objects.get(name="live")
run = Run.objects.create(owner=seed.owner, name="ended-%(status)s", dataset=seed.dataset, config=seed.config)
RunReward.objects.create(run=run, reward_function=seed.run_rewards.get().reward_function)
run.enqueue()
run.mark_starting()
run.mark_running()
run.current_step = 23
run.mark_failed("trainer killed") if "%(status)s" == "failed" else run.mark_cancelled()
run.save()
Checkpoint.objects.create(run=run, step=20, path="/ckpt/20", created_at=timezone.now())
print(json.dumps({"run_id": run.pk}))
"""


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_run_that_ended_is_resumed_from_the_shell_and_queued_as_its_second_attempt(server, capsys, status):
    run_id = server.shell_json(ENDED_WITH_A_CHECKPOINT % {"status": status})["run_id"]
    api = ControlPlane(server.url, server.seeded["key"])
    assert (api.run(run_id)["status"], api.run(run_id)["attempt"]) == (status, 1)
    code, out, err = grpo(server, capsys, "runs", "resume", str(run_id))
    assert code == 0, err
    assert out.strip() == f"run {run_id} 'ended-{status}': queued"
    resumed = api.run(run_id)
    assert (resumed["status"], resumed["attempt"], resumed["error_message"]) == ("queued", 2, "")
    assert "resume" not in resumed["allowed_actions"] and "cancel" in resumed["allowed_actions"]
    spec = server.shell_json(f"import json; from runs.models import Run; "
                             f"print(json.dumps(Run.objects.get(pk={run_id}).launch_spec))")
    assert spec["resume_from"] == "/ckpt/20"


def test_a_run_is_resumed_from_the_shell_on_other_machines_and_a_count_its_config_refuses_is_said(server, capsys):
    run_id = server.shell_json(ENDED_WITH_A_CHECKPOINT % {"status": "failed"})["run_id"]
    code, _, err = grpo(server, capsys, "runs", "resume", str(run_id), "--trainer-machines", "0")
    assert code != 0 and "trainer_machines" in err, err
    code, _, err = grpo(server, capsys, "runs", "resume", str(run_id), "--inference-machines", "1")
    assert code == 0, err
    spec = server.shell_json(f"import json; from runs.models import Run; "
                             f"print(json.dumps(Run.objects.get(pk={run_id}).launch_spec))")
    assert spec["config"]["inference_machines"] == 1 and spec["resume_from"] == "/ckpt/20"


def report(server, events):
    run_id, token = server.seeded["run_id"], server.seeded["token"]
    numbered = [{"seq": seq, **event} for seq, event in enumerate(events, start=report.seq)]
    report.seq += len(events)
    answer = httpx.post(f"{server.url}/api/runs/{run_id}/events/", json={"source": "cli-test", "events": numbered},
                        headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text


report.seq = 1


def test_watch_follows_a_run_to_its_end_with_its_warnings(server, capsys):
    def trainer():
        report(server, [{"type": "status", "status": "starting"}, {"type": "status", "status": "running"}])
        for step in (1, 2, 3):
            time.sleep(0.3)
            # Step 2's KL to the sampler spikes: an alarm (sampler_drift) the watch prints.
            report(server, [{"type": "metrics", "step": step, "values": {
                "rollout/reward_mean": step / 4, "train/kl_to_sampler": 5.0 if step == 2 else 0.01}}])
        report(server, [{"type": "log", "level": "warning", "message": "reward sandbox slow"},
                        {"type": "status", "status": "succeeded", "message": "trained 3 steps"}])

    feeding = threading.Thread(target=trainer)
    feeding.start()
    code, out, err = grpo(server, capsys, "runs", "watch", str(server.seeded["run_id"]), "--every", "0.2")
    feeding.join()
    assert code == 0
    assert "warning: reward sandbox slow" in out + err
    assert "alarm sampler_drift at step 2: " in out + err
    assert out.strip().splitlines()[-1] == f"run {server.seeded['run_id']} succeeded at step 3: trained 3 steps"


def test_the_launcher_runs_the_command_line_from_the_checkout():
    shown = subprocess.run([str(ROOT / "grpo"), "runs", "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "watch" in shown.stdout


def test_the_launcher_takes_the_token_from_the_environment_or_a_file_of_its_owners(server, tmp_path):
    """Never from its command line, where `ps` would show it to every user of the machine."""
    def listed(**env) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "grpo"), "--url", server.url, "runs", "list"], capture_output=True,
                              text=True, timeout=60, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env})

    from_env = listed(GRPO_TOKEN=server.seeded["key"])
    assert from_env.returncode == 0 and "live" in from_env.stdout
    token_file = tmp_path / ".config" / "grpo" / "token"
    token_file.parent.mkdir(parents=True)
    token_file.write_text(server.seeded["key"] + "\n")
    token_file.chmod(0o600)
    assert listed().stdout == from_env.stdout
    token_file.chmod(0o644)
    loose = listed()
    assert loose.returncode == 2 and f"chmod 600 {token_file}" in loose.stderr
