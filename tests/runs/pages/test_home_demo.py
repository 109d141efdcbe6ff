"""The home page: recent runs, and the one-click demo run that makes its library once and
starts a real (queued) run on the cpu-demo preset."""
from runs.actions.demo import DEMO_DATASET
from runs.models import Dataset, RewardFunction, Run, RunStatus, TrainingConfig
from worker.trainer.config import DEFAULT_MODEL, PRESETS


def start_demo(client, capture):
    with capture(execute=True):
        return client.post("/runs/demo/")


def test_home_offers_the_demo_run(logged_in):
    html = logged_in.get("/").content.decode()
    assert 'action="/runs/demo/"' in html and "Start a demo run" in html


def test_home_lists_recent_runs_with_links(logged_in, run):
    html = logged_in.get("/").content.decode()
    assert f'href="/runs/{run.pk}/"' in html and "All runs" in html


def test_the_demo_run_creates_its_library_and_queues_a_run(logged_in, owner, broker,
                                                           django_capture_on_commit_callbacks):
    response = start_demo(logged_in, django_capture_on_commit_callbacks)
    run = Run.objects.get(owner=owner)
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert run.status == RunStatus.QUEUED and run.name == "Demo run 1"
    assert run.dataset.generator == "arithmetic" and run.dataset.row_count == 5000
    assert run.dataset.generator_params["examples"] == 1 and run.dataset.prompt_format == "chat"
    assert sorted(rr.reward_function.builtin for rr in run.run_rewards.all()) == ["accuracy", "format"]
    assert run.config["model"] == DEFAULT_MODEL
    for knob, value in PRESETS["cpu-demo"].items():
        assert run.config[knob] == value
    sent = broker.call_args.kwargs
    assert sent["args"][0] == run.pk and sent["queue"] == "default"
    assert sent["args"][1]["dataset"]["generator"] == "arithmetic"


def test_an_older_demo_dataset_is_left_as_its_runs_used_it(logged_in, owner, broker,
                                                           django_capture_on_commit_callbacks):
    older = Dataset.objects.create(owner=owner, name="Demo: arithmetic", source="generator", generator="arithmetic",
                                   generator_params={"count": 5000, "difficulty": 1, "seed": 0}, row_count=5000)
    start_demo(logged_in, django_capture_on_commit_callbacks)
    older.refresh_from_db()
    assert older.generator_params == {"count": 5000, "difficulty": 1, "seed": 0}
    assert Run.objects.get(owner=owner).dataset.generator_params["examples"] == 1


def test_a_second_demo_run_reuses_the_library(logged_in, owner, broker, django_capture_on_commit_callbacks):
    start_demo(logged_in, django_capture_on_commit_callbacks)
    start_demo(logged_in, django_capture_on_commit_callbacks)
    assert Dataset.objects.filter(owner=owner).count() == 1
    assert RewardFunction.objects.filter(owner=owner).count() == 2
    assert TrainingConfig.objects.filter(owner=owner).count() == 1
    assert sorted(Run.objects.filter(owner=owner).values_list("name", flat=True)) == ["Demo run 1", "Demo run 2"]


def test_each_user_gets_their_own_demo_library(client, owner, other_user, broker, django_capture_on_commit_callbacks):
    for user in (owner, other_user):
        client.force_login(user)
        start_demo(client, django_capture_on_commit_callbacks)
    assert Dataset.objects.filter(owner=other_user, name=DEMO_DATASET["name"]).exists()
    assert Run.objects.get(owner=other_user).dataset.owner == other_user


def test_the_demo_lands_on_a_live_page_for_it(logged_in, broker, django_capture_on_commit_callbacks):
    response = start_demo(logged_in, django_capture_on_commit_callbacks)
    page = logged_in.get(response.url)
    assert page.status_code == 200 and "Demo run 1" in page.content.decode()


def test_the_demo_needs_post(logged_in):
    assert logged_in.get("/runs/demo/").status_code == 405
    assert not Run.objects.exists()


def test_the_demo_needs_a_login(client, db):
    assert client.post("/runs/demo/").status_code == 302
    assert not Run.objects.exists()
