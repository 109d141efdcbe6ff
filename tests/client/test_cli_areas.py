"""`./grpo` over the areas beyond runs and rewards, against one live control plane: a config from
a preset and knobs, a dataset from a generator, an environment made, listed and dry-run, a reward
dry-run, a checkpoint downloaded with progress and gone on from a part, two runs compared, a run's
evaluations, outcomes and examples, and the workers listed; refusals, an unreachable server and a
watched run that failed each exit with their own code and one line."""
import json

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main
from tests.support.asgi_server import SEED_RUN, AsgiServer

SEED_MORE = """
import json
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token
from runs.models import Checkpoint, Run, RunReward
from tests.support.evaluations import FIVE_CLASSES, store_evaluations
owner = get_user_model().objects.get(username="owner")
seed = Run.objects.get(name="live")
store_evaluations(seed, FIVE_CLASSES)
ended = Run.objects.create(owner=owner, name="ended", dataset=seed.dataset, config=dict(seed.config, beta=0.2))
RunReward.objects.create(run=ended, reward_function=seed.run_rewards.get().reward_function)
ended.enqueue()
ended.mark_starting()
ended.mark_running()
ended.mark_failed("trainer killed")
ended.save()
folder = settings.RUNS_DIR / str(ended.pk) / "checkpoints" / "step-0000010"
folder.mkdir(parents=True)
(folder / "config.json").write_text('{"model_type": "llama"}')
(folder / "model.safetensors").write_bytes(bytes(range(256)) * 4096)
checkpoint = Checkpoint.objects.create(run=ended, step=10, path=str(folder), created_at=timezone.now())
print(json.dumps({"run_id": seed.pk, "key": Token.objects.create(user=owner).key, "ended": ended.pk,
                  "checkpoint": checkpoint.pk, "reward": seed.run_rewards.get().reward_function_id}))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with AsgiServer(tmp_path_factory.mktemp("cp")) as live:
        live.seeded = live.shell_json(SEED_RUN + SEED_MORE)  # one shell: a Django start-up each
        yield live


def grpo(server, capsys, *argv, url: str | None = None) -> tuple[int, str, str]:
    code = main(list(argv), api=ControlPlane(url or server.url, server.seeded["key"]))
    out, err = capsys.readouterr()
    return code, out, err


def grpo_json(server, capsys, *argv):
    code, out, err = grpo(server, capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_config_from_a_preset_and_knobs_is_shown_changed_and_refused_with_the_apis_words(server, capsys):
    presets = {preset["name"]: preset["values"] for preset in grpo_json(server, capsys, "configs", "presets")}
    assert presets["cpu-demo"]["num_generations"] == 8
    made = grpo_json(server, capsys, "configs", "create", "--name", "demo", "--preset", "cpu-demo",
                     "--set", "max_steps=7", "--set", "beta=0.05")
    shown = grpo_json(server, capsys, "configs", "show", str(made["id"]))
    assert (shown["name"], shown["values"]["max_steps"], shown["values"]["beta"]) == ("demo", 7, 0.05)
    code, out, _ = grpo(server, capsys, "configs", "update", str(made["id"]), "--set", "max_steps=9")
    assert code == 0 and grpo_json(server, capsys, "configs", "show", str(made["id"]))["values"]["max_steps"] == 9
    code, out, _ = grpo(server, capsys, "configs", "list")
    assert ["id", "name", "model", "steps", "description"] == out.splitlines()[0].split()
    code, out, err = grpo(server, capsys, "configs", "create", "--name", "bad", "--set", "max_steps=-3")
    assert code == 1 and out == "" and err.startswith("refused: HTTP 400: values: ") and "max_steps" in err
    assert len(err.strip().splitlines()) == 1


def test_an_environment_is_made_on_a_generated_dataset_listed_and_played_with_typed_turns(server, capsys):
    dataset = grpo_json(server, capsys, "datasets", "create", "--name", "sums", "--generator", "arithmetic",
                        "--param", "count=4", "--param", "seed=1")
    code, out, _ = grpo(server, capsys, "datasets", "show", str(dataset["id"]))
    assert code == 0 and f"dataset {dataset['id']} 'sums': 4 rows (generator arithmetic)" in out and "[0] " in out
    made = grpo_json(server, capsys, "environments", "create", "--name", "calc", "--kind", "builtin",
                     "--builtin", "calculator", "--dataset", str(dataset["id"]),
                     "--reward", f"{server.seeded['reward']}:0.5")
    assert made["rubric"] == [{"reward_function": server.seeded["reward"], "name": "acc", "weight": 0.5}]
    code, out, _ = grpo(server, capsys, "environments", "list")
    assert [str(made["id"]), "calc", "builtin", "calculator"] == out.splitlines()[1].split()[:4]
    played = grpo_json(server, capsys, "environments", "dry-run", str(made["id"]), "--turn", "The answer is 4.")
    assert played["environment"] == made["id"] and played["player"] == "typed" and played["turns"]
    code, out, err = grpo(server, capsys, "rewards", "dry-run", str(server.seeded["reward"]), "--dataset",
                          str(dataset["id"]), "--completion", "no idea", "--completion", "still none")
    assert code == 0 and out.splitlines() == ["row 0: scores [0.0]", "row 1: scores [0.0]"], err


def test_a_cloned_run_is_renamed_and_given_a_knob_on_top_of_its_own_then_deleted(server, capsys):
    clone = grpo_json(server, capsys, "runs", "clone", str(server.seeded["ended"]), "--name", "again")
    assert (clone["name"], clone["status"], clone["config"]["beta"]) == ("again", "created", 0.2)
    changed = grpo_json(server, capsys, "runs", "update", str(clone["id"]), "--name", "again-2", "--set", "seed=7")
    assert (changed["name"], changed["config"]["seed"], changed["config"]["beta"]) == ("again-2", 7, 0.2)
    code, out, err = grpo(server, capsys, "runs", "update", str(server.seeded["ended"]), "--set", "seed=7")
    assert code == 1 and "its settings are frozen" in err
    assert grpo(server, capsys, "runs", "delete", str(clone["id"]))[1].strip() == f"run {clone['id']} deleted"


def test_a_checkpoint_downloads_with_progress_and_goes_on_from_a_part(server, capsys, tmp_path):
    run, checkpoint = str(server.seeded["ended"]), str(server.seeded["checkpoint"])
    listed = grpo_json(server, capsys, "checkpoints", "list", run)
    assert [(c["id"], c["step"]) for c in listed] == [(server.seeded["checkpoint"], 10)]
    whole = tmp_path / "whole.tar"
    code, out, err = grpo(server, capsys, "checkpoints", "download", run, checkpoint, "-o", str(whole))
    size = whole.stat().st_size
    assert code == 0 and out.strip() == f"{whole}: {size} bytes" and size > 1024 * 1024
    assert "whole.tar" in err and "100%" in err  # the progress bar, on stderr

    # A part an earlier try left, with the ETag it was sent under: only the rest is asked for.
    etag = httpx.get(f"{server.url}/api/runs/{run}/checkpoints/{checkpoint}/download/",
                     headers={"Authorization": f"Token {server.seeded['key']}", "Range": "bytes=0-0"}).headers["ETag"]
    again = tmp_path / "again.tar"
    (tmp_path / "again.tar.part").write_bytes(whole.read_bytes()[:size // 3])
    (tmp_path / "again.tar.part.etag").write_text(etag)
    done = grpo_json(server, capsys, "checkpoints", "download", run, checkpoint, "-o", str(again))
    assert done == {"path": str(again), "size": size, "resumed_from": size // 3}
    assert again.read_bytes() == whole.read_bytes() and not (tmp_path / "again.tar.part").exists()


def test_two_runs_are_compared_and_the_failed_ones_evaluations_and_the_workers_listed(server, capsys):
    ids = [str(server.seeded["run_id"]), str(server.seeded["ended"])]
    compared = grpo_json(server, capsys, "compare", "runs", *ids)
    assert [r["id"] for r in compared["runs"]] == list(map(int, ids))
    assert "config.beta" in [d["field"] for d in compared["config_diff"]["differing"]]
    code, out, _ = grpo(server, capsys, "compare", "runs", *ids)
    assert code == 0 and out.splitlines()[0].split()[:3] == ["run", "name", "status"] and "config.beta" in out
    assert grpo_json(server, capsys, "evaluations", "list", ids[1])["evaluations"] == []


def test_a_runs_evaluations_their_outcomes_and_examples_are_listed(server, capsys):
    run = str(server.seeded["run_id"])  # seeded with tests/support/evaluations.py's FIVE_CLASSES
    code, out, _ = grpo(server, capsys, "evaluations", "list", run)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == ["0", "10", "20"]
    flipped = grpo_json(server, capsys, "evaluations", "outcomes", run, "10", "--outcome", "flipped")
    assert [o["index"] for o in flipped["results"]] == [2, 3, 4]
    code, out, _ = grpo(server, capsys, "evaluations", "examples", run, "--classification", "learned")
    assert code == 0 and out.splitlines()[1].split()[:3] == ["2", "learned", "1"]
    assert grpo_json(server, capsys, "evaluations", "example", run, "3")["classification"] == "forgotten"
    code, _, err = grpo(server, capsys, "evaluations", "outcomes", run, "15")
    assert code == 1 and "was not evaluated at step 15; it was at steps 0, 10, 20" in err
    # The test server's in-memory broker has no worker: none answers the inspection.
    assert grpo_json(server, capsys, "workers", "list")["workers"] == []
    assert grpo(server, capsys, "workers", "list")[1].startswith("no live worker answered (asked at ")


def test_a_watched_run_that_failed_exits_3_and_an_unreachable_server_4_in_one_line(server, capsys):
    code, out, _ = grpo(server, capsys, "runs", "watch", str(server.seeded["ended"]), "--every", "0.1")
    assert code == 3 and out.strip().endswith("failed at step 0: trainer killed")
    code, out, err = grpo(server, capsys, "runs", "list", url="http://127.0.0.1:9")
    assert code == 4 and out == "" and err.startswith("grpo: cannot reach http://127.0.0.1:9: ")
    assert len(err.strip().splitlines()) == 1
