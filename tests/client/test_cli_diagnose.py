"""`grpo runs diagnose RUN`: the sentence, the time split as a table and each suggestion for people;
--json prints the API's document as it came. The API is a recording transport answering what the
engine makes of a run that waited for rollouts behind a small in-flight cap."""
import json

import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main
from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of

CAP_HELD = step_of(12.4, 6.0, 1.0, other=0.6, async__blocked_by_inflight_cap=0.9, async__blocked_by_staleness=0.0,
                   async__ahead_bound=8)
DIAGNOSIS = diagnose(series(CAP_HELD), {**CONFIG, "max_inflight_tasks": 4}).as_dict()


@pytest.fixture
def grpo(capsys):
    asked = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append((request.method, request.url.path))
        return httpx.Response(200, json=DIAGNOSIS)

    def run(*argv: str) -> tuple[str, list]:
        assert main(list(argv), api=ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(answer))) == 0
        return capsys.readouterr().out, asked

    return run


def test_diagnose_prints_the_sentence_the_time_split_and_each_suggestion_with_its_change(grpo):
    out, asked = grpo("runs", "diagnose", "7")
    lines = out.splitlines()
    assert asked == [("GET", "/api/runs/7/diagnosis/")]
    assert lines[0] == DIAGNOSIS["sentence"]
    assert lines[2].split() == ["part", "seconds", "share"]
    assert lines[3].split() == ["waiting", "for", "rollouts", "12.40", "62%"]
    assert "suggest max_inflight_tasks 4 -> 8: the in-flight cap of 4 held submission back 90% of the time" in out
    assert "suggest max_inflight_tasks 4 -> auto: " in out


def test_diagnose_json_prints_the_document_as_the_api_gave_it(grpo):
    out, _ = grpo("runs", "diagnose", "7", "--json")
    assert json.loads(out) == DIAGNOSIS


def test_a_suggestion_that_changes_two_knobs_names_both():
    from client.cli.runs import knob_change

    change = {"knob": "per_device_train_batch_size", "current": 2, "proposed": 4,
              "also_set": {"gradient_accumulation_steps": 4}}
    assert knob_change(change) == "per_device_train_batch_size 2 -> 4, gradient_accumulation_steps 4"
    assert knob_change({"knob": "gradient_checkpointing", "current": True, "proposed": False}) == \
        "gradient_checkpointing true -> false"
