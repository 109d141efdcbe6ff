"""The evaluator: answers every example at the server's current weights, in its own thread, and
reports the outcome; a server or reward failure is a warning, never an exception for the run."""
import json

import httpx

from worker.trainer.config import TrainingConfig
from worker.trainer.evaluation.eval_set import EvalExample
from worker.trainer.evaluation.evaluator import Evaluator
from worker.trainer.rollout.scoring import RewardFunction, Scorer


class Report:
    def __init__(self):
        self.evaluations, self.lines = [], []

    def evaluation(self, step, model_version, examples, summary):
        self.evaluations.append((step, model_version, examples, summary))

    def log(self, message, level="info"):
        self.lines.append((level, message))


def server(answer_of, requests=None):
    """A completions endpoint answering each prompt (token ids) with answer_of(ids), n times."""
    def handle(request):
        body = json.loads(request.content)
        if requests is not None:
            requests.append(body)
        text = answer_of(body["prompt"])
        return httpx.Response(200, json={"choices": [
            {"index": i, "text": text, "token_ids": [5, 6], "finish_reason": "stop",
             "logprobs": {"token_logprobs": [-0.1, -0.2]}} for i in range(body["n"])]})
    return httpx.MockTransport(handle)


EXAMPLES = [EvalExample(index=i, key=f"{i:016x}", prompt_text=f"{i}+{i}?", prompt_ids=[i], columns={"answer": 2 * i})
            for i in range(3)]


def right_answer(prompts, completions, answer, **columns):
    return [float(c == str(a)) for c, a in zip(completions, answer)]


def evaluator(transport, report, rewards=None, **knobs):
    scorer = Scorer(rewards or [RewardFunction("right", 1.0, right_answer)],
                    on_error=lambda name, message: report.log(f"{name}: {message}", level="warning"))
    return Evaluator(EXAMPLES, scorer, TrainingConfig(**knobs), report, "http://vllm", served_name=lambda: "policy",
                     transport=transport)


def test_an_evaluation_reports_each_examples_answers_and_the_summary_at_its_step():
    report, requests = Report(), []
    # Right for the first two examples (0+0, 1+1), wrong for 2+2.
    ev = evaluator(server(lambda ids: {0: "0", 1: "2", 2: "5"}[ids[0]], requests), report)
    ev.start(step=10, model_version=4)
    ev.wait()
    (step, version, examples, summary), = report.evaluations
    assert (step, version) == (10, 4)
    assert [e["answers"][0]["passed"] for e in examples] == [True, True, False]
    assert examples[2]["key"] == EXAMPLES[2].key and examples[2]["prompt"] == "2+2?"
    assert summary["eval/pass@1"] == 2 / 3 and summary["eval/reward/right_mean"] == 2 / 3
    assert {body["temperature"] for body in requests} == {0.0}  # one answer each: greedy
    assert {body["model"] for body in requests} == {"policy"} and not ev.running


def test_several_samples_are_drawn_at_the_eval_temperature_and_give_pass_at_k():
    report, requests = Report(), []
    ev = evaluator(server(lambda ids: "0", requests), report, eval_samples=4, eval_temperature=0.7)
    ev.start(step=0, model_version=0)
    ev.wait()
    summary = report.evaluations[0][3]
    assert {(body["n"], body["temperature"]) for body in requests} == {(4, 0.7)}
    assert summary["eval/pass@1"] == 1 / 3 and summary["eval/pass@4"] == 1 / 3


def test_a_server_that_fails_gives_a_warning_and_no_evaluation():
    report = Report()
    ev = evaluator(httpx.MockTransport(lambda request: httpx.Response(500, text="engine dead")), report)
    ev.start(step=5, model_version=5)
    ev.wait()
    assert report.evaluations == []
    (level, message), = report.lines
    assert level == "warning" and "evaluation at step 5 failed" in message and "tried again" in message


def test_a_reward_that_raises_is_a_warning_and_the_evaluation_is_still_reported():
    def broken(prompts, completions, **columns):
        raise RuntimeError("no such column")

    report = Report()
    ev = evaluator(server(lambda ids: "0"), report,
                   rewards=[RewardFunction("right", 1.0, right_answer), RewardFunction("broken", 1.0, broken)])
    ev.start(step=2, model_version=2)
    ev.wait()
    assert len(report.evaluations) == 1
    assert any(level == "warning" and "no such column" in message for level, message in report.lines)
    assert report.evaluations[0][2][0]["answers"][0]["rewards"]["broken"] is None


def test_starting_an_evaluation_waits_for_the_one_running():
    report = Report()
    ev = evaluator(server(lambda ids: "0"), report)
    ev.start(step=0, model_version=0)
    ev.start(step=2, model_version=1)
    ev.wait()
    assert [evaluation[0] for evaluation in report.evaluations] == [0, 2]


def test_an_evaluation_cut_short_by_the_run_ending_is_no_warning():
    report = Report()
    ev = evaluator(httpx.MockTransport(lambda request: httpx.Response(500, text="shutting down")), report)
    ev.stop()
    ev.start(step=7, model_version=7)
    ev.wait()
    assert report.lines == [] and report.evaluations == []
