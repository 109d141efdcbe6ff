"""POST /api/environments/<id>/dry-run/: one episode on a dataset row, with typed assistant turns,
played by the trainer's episode runner; every turn, how it ended, and each sandbox call's time,
output and error with its line."""
import pytest

from runs.environments.models.environment import Environment, EnvironmentReward

# The arithmetic dataset's first rows: 7 - 1 = 6, then 5 - 7 = -2.


def dry_run(client, environment, **body):
    return client.post(f"/api/environments/{environment.pk}/dry-run/", body, format="json")


def roles(body):
    return [turn["role"] for turn in body["turns"]]


def test_the_calculator_answers_a_typed_call_and_the_answer_ends_the_episode(owner_api, calculator):
    response = dry_run(owner_api, calculator, turns=["<calculate>7 - 1</calculate>", "7 - 1 = 6\n#### 6"])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["end_reason"] == "done" and body["error"] is None and body["tool_call_format"] == "text"
    assert body["tools"] == [{"name": "calculate", "description": body["tools"][0]["description"],
                              "parameter": "expression"}]
    assert roles(body)[-4:] == ["user", "assistant", "tool", "assistant"]
    assert "What is 7 - 1?" in body["turns"][-4]["content"]
    assert body["turns"][-3]["tool_calls"] == [{"name": "calculate", "arguments": "7 - 1"}]
    assert body["turns"][-2]["content"] == "6"
    assert body["tool_calls"] == 1 and body["assistant_turns"] == 2 and body["player"] == "typed"
    assert body["rubric"] == [{"name": "acc", "weight": 1.0, "score": 1.0, "error": None, "output": "",
                               "environment": False}]
    assert body["reward"] == 1.0


def test_the_environments_own_rewards_join_the_rubric(owner_api, calculator):
    calculator.params = {**calculator.params, "cost_per_call": 0.25}
    calculator.save()
    body = dry_run(owner_api, calculator, turns=["<calculate>7 - 1</calculate>", "#### 5"]).json()
    assert [(item["name"], item["score"]) for item in body["rubric"]] == [("acc", 0.0), ("tool_cost", -0.25)]
    assert body["reward"] == -0.25


def test_feedback_answers_each_wrong_attempt_until_the_right_one(owner_api, feedback):
    body = dry_run(owner_api, feedback, turns=["#### 5", "#### 7", "so #### 6"]).json()
    assert [t["content"] for t in body["turns"] if t["role"] == "user"][1:] == ["Too low. Try again.",
                                                                             "Too high. Try again."]
    assert body["end_reason"] == "done" and body["assistant_turns"] == 3


def test_when_the_typed_turns_run_out_the_episode_stops_at_the_turn_limit(owner_api, feedback):
    body = dry_run(owner_api, feedback, turns=["#### 5"], row=1).json()
    assert body["end_reason"] == "max_turns" and body["assistant_turns"] == 1
    assert body["turns"][-1] == {**body["turns"][-1], "role": "user", "content": "Too high. Try again."}


def test_code_runs_in_the_sandbox_and_its_calls_show_time_and_output(owner_api, guess):
    response = dry_run(owner_api, guess, turns=['<tool_call>{"name": "hint", "arguments": {}}</tool_call>',
                                                "it is 5", "it is 6"])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["tool_call_format"] == "hermes" and body["end_reason"] == "done"
    assert [t["content"] for t in body["turns"] if t["role"] in ("tool", "user")][1:] == ["it is even", "no, try again"]
    assert [call["op"] for call in body["calls"]] == ["load", "start", "step", "step", "step"]
    assert body["calls"][3]["output"] == "heard it is 5\n" and all(call["seconds"] < 10 for call in body["calls"])


def test_an_exception_in_step_ends_the_episode_with_its_line_and_traceback(owner_api, owner, dataset, reward, author):
    broken = Environment.objects.create(owner=owner, name="broken", kind="code", dataset=dataset,
                                        source="def step(messages, row):\n    return row['missing']\n")
    EnvironmentReward.objects.create(environment=broken, reward_function=reward)
    body = dry_run(owner_api, broken, turns=["#### 6"]).json()
    assert body["end_reason"] == "environment_error"
    assert body["error"]["kind"] == "exception" and body["error"]["line"] == 2
    assert 'File "environment.py", line 2, in step' in body["error"]["traceback"]
    assert body["turns"][-1]["error"]
    assert body["reward"] is None and body["rubric"] == []  # a failed episode gets no reward, as in a run


def test_code_that_fails_as_it_loads_shows_the_line_and_plays_nothing(owner_api, owner, dataset, reward, author):
    broken = Environment.objects.create(owner=owner, name="broken", kind="code", dataset=dataset,
                                        source="import math\nx = 1 / 0\ndef step(messages, row):\n    return None\n")
    body = dry_run(owner_api, broken, turns=["#### 6"]).json()
    assert body["end_reason"] == "environment_error" and body["turns"] == []
    assert body["error"]["line"] == 2 and "ZeroDivisionError" in body["error"]["message"]


def test_playing_against_a_model_that_is_not_here_is_refused_saying_why(owner_api, calculator, settings, tmp_path):
    settings.MODELS_DIR = tmp_path / "models"
    response = dry_run(owner_api, calculator)
    assert response.status_code == 400
    message = response.json()["model"][0] if isinstance(response.json()["model"], list) else response.json()["model"]
    assert "type the assistant turns instead" in message


@pytest.mark.parametrize("body, field", [
    ({"turns": ["#### 6"], "row": 10}, "row"), ({"turns": []}, "turns"), ({"turns": ["x"] * 17}, "turns"),
    ({"turns": [3]}, "turns"), ({"turns": ["x"], "tool_call_format": "xml"}, "tool_call_format"),
])
def test_bad_requests_name_the_field(owner_api, calculator, body, field):
    response = dry_run(owner_api, calculator, **body)
    assert response.status_code == 400 and field in response.json(), response.content


def test_a_verifiers_environment_is_not_dry_run_here(owner_api, owner):
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-math")
    response = dry_run(owner_api, environment, turns=["x"])
    assert response.status_code == 400 and "played by the workers" in str(response.json())


def test_someone_elses_environment_is_not_found(other_api, calculator):
    assert dry_run(other_api, calculator, turns=["x"]).status_code == 404
