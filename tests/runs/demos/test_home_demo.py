"""The home page: recent runs, and a one-click button per demo (runs/demos/definitions.py) that
makes the demo's library once and starts a real (queued) run on the cpu-demo preset."""
import pytest

from runs.training_runs.demo_runs import RUN_NAMES
from runs.demos.definitions import DEMOS
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunStatus
from runs.configs.models import TrainingConfig
from runs.site.home import WHAT_IT_IS
from worker.trainer.config import DEFAULT_MODEL, PRESETS

KEYS = sorted(DEMOS)


def start_demo(client, capture, key: str):
    with capture(execute=True):
        return client.post(f"/runs/demo/{key}/")


def test_home_offers_each_demo_with_what_to_watch(logged_in):
    html = logged_in.get("/").content.decode()
    for key, demo in DEMOS.items():
        assert f'action="/runs/demo/{key}/"' in html and f'id="demo-run-{key}"' in html
        assert demo.title in html and demo.watch in html
    assert html.count('name="csrfmiddlewaretoken"') >= len(DEMOS)


def test_every_demo_has_a_line_on_what_it_is_and_a_name_for_its_runs():
    """A demo added to the definitions is offered with both, never a blank line or a failed click."""
    assert set(WHAT_IT_IS) == set(RUN_NAMES) == set(DEMOS)
    assert all(WHAT_IT_IS.values()) and len(set(RUN_NAMES.values())) == len(DEMOS)


def test_home_lists_recent_runs_with_links(logged_in, run):
    html = logged_in.get("/").content.decode()
    assert f'href="/runs/{run.pk}/"' in html and "All runs" in html


def test_the_arithmetic_demo_creates_its_library_and_queues_a_run(logged_in, owner, broker,
                                                                  django_capture_on_commit_callbacks):
    response = start_demo(logged_in, django_capture_on_commit_callbacks, "arithmetic")
    run = Run.objects.get(owner=owner)
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert run.status == RunStatus.QUEUED and run.name == "Demo run 1" and run.environment is None
    assert run.dataset.generator == "arithmetic" and run.dataset.row_count == 5000
    assert run.dataset.generator_params["examples"] == 1 and run.dataset.prompt_format == "chat"
    # The format is charted, not paid.
    assert {rr.reward_function.builtin: rr.weight for rr in run.run_rewards.all()} == {"accuracy": 1.0, "format": 0.0}
    assert [rr.reward_function.name for rr in run.run_eval_rewards.all()] == DEMOS["arithmetic"].eval_rewards
    assert run.config["model"] == DEFAULT_MODEL
    for knob, value in DEMOS["arithmetic"].config_values(PRESETS).items():
        assert run.config[knob] == value
    sent = broker.call_args.kwargs
    assert sent["args"][0] == run.pk and sent["queue"] == "default"
    assert sent["args"][1]["dataset"]["generator"] == "arithmetic"


def test_the_tool_use_demo_runs_on_the_calculator(logged_in, owner, broker, django_capture_on_commit_callbacks):
    response = start_demo(logged_in, django_capture_on_commit_callbacks, "tool-use")
    run = Run.objects.get(owner=owner)
    demo = DEMOS["tool-use"]
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert run.status == RunStatus.QUEUED and run.name == "Tool-use demo run 1"
    assert run.environment.builtin == "calculator" and run.environment.name == demo.environment["name"]
    assert run.dataset == run.environment.dataset and run.dataset.name == demo.dataset["name"]
    assert [rr.reward_function.name for rr in run.run_rewards.all()] == [f["name"] for f, _ in demo.rewards]
    assert [rr.reward_function.name for rr in run.run_eval_rewards.all()] == demo.eval_rewards
    assert run.config_template.name == demo.config["name"]
    for knob, value in demo.config_values(PRESETS).items():
        assert run.config[knob] == value
    assert broker.call_args.kwargs["args"][1]["environment"]["builtin"] == "calculator"


def test_the_message_after_starting_says_what_to_watch(logged_in, broker, django_capture_on_commit_callbacks):
    response = start_demo(logged_in, django_capture_on_commit_callbacks, "tool-use")
    page = logged_in.get(response.url).content.decode()
    assert "Tool-use demo run 1" in page and DEMOS["tool-use"].watch in page


def test_an_older_demo_dataset_is_left_as_its_runs_used_it(logged_in, owner, broker,
                                                           django_capture_on_commit_callbacks):
    older = Dataset.objects.create(owner=owner, name="Demo: arithmetic, one worked example", source="generator",
                                   generator="arithmetic", row_count=5000,
                                   generator_params={"count": 5000, "difficulty": 1, "seed": 0, "examples": 1})
    start_demo(logged_in, django_capture_on_commit_callbacks, "arithmetic")
    older.refresh_from_db()
    assert older.generator_params == {"count": 5000, "difficulty": 1, "seed": 0, "examples": 1}
    assert Run.objects.get(owner=owner).dataset.generator_params["largest"] == 30


@pytest.mark.parametrize("key", KEYS)
def test_a_second_click_reuses_the_library(logged_in, owner, broker, django_capture_on_commit_callbacks, key):
    start_demo(logged_in, django_capture_on_commit_callbacks, key)
    start_demo(logged_in, django_capture_on_commit_callbacks, key)
    demo = DEMOS[key]
    assert Dataset.objects.filter(owner=owner).count() == 1
    assert RewardFunction.objects.filter(owner=owner).count() == len(demo.rewards)
    assert Environment.objects.filter(owner=owner).count() == (demo.environment is not None)
    assert TrainingConfig.objects.filter(owner=owner).count() == 1
    runs = Run.objects.filter(owner=owner).order_by("id")
    assert [run.name.rsplit(" ", 1)[1] for run in runs] == ["1", "2"]
    assert len({(run.dataset_id, run.environment_id, run.config_template_id) for run in runs}) == 1


def test_the_two_demos_share_the_accuracy_reward(logged_in, owner, broker, django_capture_on_commit_callbacks):
    for key in KEYS:
        start_demo(logged_in, django_capture_on_commit_callbacks, key)
    assert RewardFunction.objects.filter(owner=owner, name="Demo: accuracy").count() == 1
    assert sorted(Run.objects.filter(owner=owner).values_list("name", flat=True)) == [
        "Demo run 1", "Tool-use demo run 1"]


def test_each_user_gets_their_own_demo_library(client, owner, other_user, broker, django_capture_on_commit_callbacks):
    for user in (owner, other_user):
        client.force_login(user)
        start_demo(client, django_capture_on_commit_callbacks, "tool-use")
    run = Run.objects.get(owner=other_user)
    assert run.dataset.owner == run.environment.owner == run.config_template.owner == other_user


def test_an_unknown_demo_is_not_found(logged_in, broker):
    response = logged_in.post("/runs/demo/chess/")
    assert response.status_code == 404 and not Run.objects.exists()


@pytest.mark.parametrize("key", KEYS)
def test_a_demo_needs_post(logged_in, key):
    assert logged_in.get(f"/runs/demo/{key}/").status_code == 405
    assert not Run.objects.exists()


@pytest.mark.parametrize("key", KEYS)
def test_a_demo_needs_a_login(client, db, key):
    response = client.post(f"/runs/demo/{key}/")
    assert response.status_code == 302 and "/login/" in response.url
    assert not Run.objects.exists()
