"""Every request body refuses a field it does not take, by name, and its schema says so
(`additionalProperties: false`): the contract test need not be told."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.environments.models.environment import Environment, EnvironmentReward
from tests.support.telemetry import add_checkpoint

# Every operation a user's token may send a body to (the run-token routes are the workers').
WRITABLE = (
    "POST /api/datasets/", "PUT /api/datasets/{id}/", "PATCH /api/datasets/{id}/",
    "POST /api/reward-functions/", "PUT /api/reward-functions/{id}/", "PATCH /api/reward-functions/{id}/",
    "POST /api/reward-functions/{id}/dry-run/",
    "POST /api/configs/", "PUT /api/configs/{id}/", "PATCH /api/configs/{id}/",
    "POST /api/runs/", "PUT /api/runs/{id}/", "PATCH /api/runs/{id}/", "POST /api/runs/{id}/clone/",
    "POST /api/runs/{id}/resume/",
    "POST /api/runs/{run_id}/checkpoints/{checkpoint_id}/push/",
    "POST /api/environments/", "PUT /api/environments/{id}/", "PATCH /api/environments/{id}/",
    "POST /api/environments/{id}/dry-run/",
)


@pytest.fixture
def schema(owner_api):
    response = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def environment(owner, dataset, reward):
    made = Environment.objects.create(owner=owner, dataset=dataset, name="calc", kind="builtin",
                                      builtin="calculator", params={"cost_per_call": 0.0, "max_result_chars": 200})
    EnvironmentReward.objects.create(environment=made, reward_function=reward, weight=1.0)
    return made


@pytest.fixture
def valid_bodies(dataset, reward, config, run, environment):
    """Per writable operation: its URL and a body it takes as it is."""
    checkpoint = add_checkpoint(run, 10, "/nowhere/step-10")
    new_run = {"name": "r2", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk}],
               "config_template": config.pk}
    new_environment = {"name": "e2", "kind": "builtin", "builtin": "calculator", "dataset": dataset.pk,
                       "rubric": [{"reward_function": reward.pk}]}
    new_reward = {"name": "r2", "kind": "builtin", "builtin": "length", "params": {}}
    return {
        "POST /api/datasets/": ("/api/datasets/", {"name": "d2", "source": "hub", "hub_id": "openai/gsm8k"}),
        "PUT /api/datasets/{id}/": (f"/api/datasets/{dataset.pk}/", {"name": "d3", "source": "generator"}),
        "PATCH /api/datasets/{id}/": (f"/api/datasets/{dataset.pk}/", {"name": "d4"}),
        "POST /api/reward-functions/": ("/api/reward-functions/", new_reward),
        "PUT /api/reward-functions/{id}/": (f"/api/reward-functions/{reward.pk}/", {**new_reward, "name": "r3"}),
        "PATCH /api/reward-functions/{id}/": (f"/api/reward-functions/{reward.pk}/", {"name": "r4"}),
        "POST /api/reward-functions/{id}/dry-run/": (f"/api/reward-functions/{reward.pk}/dry-run/",
                                                     {"dataset": dataset.pk, "completions": ["4"]}),
        "POST /api/configs/": ("/api/configs/", {"name": "c2"}),
        "PUT /api/configs/{id}/": (f"/api/configs/{config.pk}/", {"name": "c3"}),
        "PATCH /api/configs/{id}/": (f"/api/configs/{config.pk}/", {"name": "c4"}),
        "POST /api/runs/": ("/api/runs/", new_run),
        "PUT /api/runs/{id}/": (f"/api/runs/{run.pk}/", {**new_run, "name": "r3"}),
        "PATCH /api/runs/{id}/": (f"/api/runs/{run.pk}/", {"name": "r4"}),
        "POST /api/runs/{id}/clone/": (f"/api/runs/{run.pk}/clone/", {"name": "copy"}),
        "POST /api/runs/{id}/resume/": (f"/api/runs/{run.pk}/resume/", {"trainer_machines": 1}),
        "POST /api/runs/{run_id}/checkpoints/{checkpoint_id}/push/": (
            f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/push/", {"repo_id": "tester/model", "token": "hf_x"}),
        "POST /api/environments/": ("/api/environments/", new_environment),
        "PUT /api/environments/{id}/": (f"/api/environments/{environment.pk}/", {**new_environment, "name": "e3"}),
        "PATCH /api/environments/{id}/": (f"/api/environments/{environment.pk}/", {"name": "e4"}),
        "POST /api/environments/{id}/dry-run/": (f"/api/environments/{environment.pk}/dry-run/", {"turns": ["4"]}),
    }


def send(api, operation: str, url: str, body: dict):
    return getattr(api, operation.split()[0].lower())(url, body, format="json")


def request_body_components(schema) -> set[str]:
    """The components a request body refers to, nested ones included."""
    components, found = schema["components"]["schemas"], set()

    def visit(node):
        if isinstance(node, dict):
            name = node.get("$ref", "").rsplit("/", 1)[-1]
            if name and name not in found:
                found.add(name)
                visit(components[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for operations in schema["paths"].values():
        for operation in operations.values():
            visit(operation.get("requestBody", {}))
    return {name for name in found if components[name].get("type") == "object"}


def test_every_request_body_component_says_unknown_fields_are_refused(schema):
    components = schema["components"]["schemas"]
    bodies = request_body_components(schema)
    assert {"DatasetRequest", "PatchedRunRequest", "RunRewardRequest", "EventBatchRequest"} <= bodies
    assert {name: components[name].get("additionalProperties") for name in bodies} == dict.fromkeys(bodies, False)


def test_a_response_body_stays_open_to_fields_added_later(schema):
    assert "additionalProperties" not in schema["components"]["schemas"]["Dataset"]


def test_every_operation_that_takes_a_users_body_is_checked_here(schema):
    written = {f"{method.upper()} {path}" for path, operations in schema["paths"].items()
               for method, operation in operations.items() if operation.get("requestBody")
               and "application/json" in operation["requestBody"]["content"] and "{run_id}/events" not in path
               and "/uploads/" not in path}  # those two take a run's token, not a user's
    assert written == set(WRITABLE)


@pytest.mark.parametrize("operation", WRITABLE)
def test_an_unknown_field_is_a_400_naming_it(owner_api, valid_bodies, operation):
    url, body = valid_bodies[operation]
    response = send(owner_api, operation, url, {**body, "colour": "red"})
    assert response.status_code == 400, response.content
    assert list(response.json()) == ["colour"] and "unknown field" in response.json()["colour"][0]


def test_the_refusal_lists_the_fields_the_body_takes(owner_api, valid_bodies):
    url, body = valid_bodies["POST /api/runs/{id}/clone/"]
    assert owner_api.post(url, {"nmae": "copy"}, format="json").json() == {
        "nmae": ["unknown field; this body takes: name"]}


def test_a_body_of_many_made_up_fields_gets_an_answer_of_a_few_lines(owner_api, valid_bodies):
    url, _ = valid_bodies["POST /api/runs/{id}/clone/"]
    answer = owner_api.post(url, {f"made-up-{index}": 1 for index in range(5000)}, format="json")
    assert answer.status_code == 400
    refused = answer.json()
    assert len(refused) == 11 and refused["non_field_errors"] == ["4990 more unknown fields"]
    assert len(answer.content) < 2000


def test_an_unknown_field_of_a_nested_body_is_named_where_it_is(owner_api, valid_bodies, reward):
    url, body = valid_bodies["POST /api/runs/"]
    response = owner_api.post(url, {**body, "rewards": [{"reward_function": reward.pk, "colour": "red"}]},
                              format="json")
    assert response.status_code == 400, response.content
    refused = {"colour": ["unknown field; this body takes: reward_function, weight"]}
    assert response.json() == {"rewards": {"0": refused}}


def test_an_unknown_field_beside_an_upload_is_a_400_naming_it(owner_api):
    upload = SimpleUploadedFile("rows.jsonl", b'{"prompt": "2+2?"}\n')
    response = owner_api.post("/api/datasets/", {"name": "up", "source": "upload", "file": upload, "colour": "red"},
                              format="multipart")
    assert response.status_code == 400 and list(response.json()) == ["colour"], response.content


def test_a_field_the_answer_shows_may_be_sent_back_and_is_ignored(owner_api, config):
    shown = owner_api.get(f"/api/configs/{config.pk}/").json()
    response = owner_api.put(f"/api/configs/{config.pk}/", {**shown, "name": "renamed", "id": 999}, format="json")
    assert response.status_code == 200 and response.json()["id"] == config.pk, response.content



def test_a_forms_csrf_token_is_how_it_is_sent_not_an_unknown_field(owner_api):
    response = owner_api.post("/api/datasets/", {"name": "d2", "source": "hub", "hub_id": "openai/gsm8k",
                                                 "csrfmiddlewaretoken": "from-the-form"}, format="multipart")
    assert response.status_code == 201, response.content
