"""The judge engine against a stub OpenAI-compatible endpoint (httpx.MockTransport): what it asks,
how it reads the answers, and what it does when the endpoint refuses, fails or goes away."""
import asyncio
import json
import threading

import httpx
import pytest

from worker.trainer.inference.server import free_port
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.rewards.judges.judge import Judge, JudgeEndpoint, JudgeEndpointError
from worker.trainer.rollout.scoring import Explained

SCORE = "Rate the answer to {prompt} from 0 to 10: {completion}"


def reply(content: str, prompt_tokens: int = 20, answer_tokens: int = 2) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": content}}],
                                     "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": answer_tokens}})


class Endpoint:
    """Answers each request with `answer(body)` (a str, or an httpx.Response), keeping what it was
    asked and how many requests it had in flight at most."""

    def __init__(self, answer=lambda body: "7", hold_s: float = 0.0):
        self.answer, self.hold_s = answer, hold_s
        self.requests: list[httpx.Request] = []
        self.in_flight = self.most_in_flight = 0

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(request.content) for request in self.requests]

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.hold_s)  # let the other calls arrive meanwhile
            answered = self.answer(json.loads(request.content))
        finally:
            self.in_flight -= 1
        return answered if isinstance(answered, httpx.Response) else reply(answered)


@pytest.fixture
def make_judge():
    judges = []

    def make(endpoint=None, vllm=True, api_key=None, base_url="http://judge.test/v1", **params):
        values = {"template": SCORE, "model": "judge-model", **params}
        if values.get("mode") == "choice":
            values.setdefault("labels", {"yes": 1.0, "no": 0.0})
        warnings = []
        judge = Judge("quality", JudgeParams(**values), JudgeEndpoint(base_url, "judge-model", api_key, vllm),
                      on_warning=warnings.append,
                      transport=httpx.MockTransport(endpoint) if endpoint is not None else None)
        judge.warnings = warnings
        judges.append(judge)
        return judge

    yield make
    for judge in judges:
        judge.close()


def record_sleeps(judge) -> list[float]:
    """The client's backoff sleeps, recorded instead of slept."""
    sleeps = []

    async def sleep(seconds):
        sleeps.append(seconds)

    judge._client.sleep = sleep
    return sleeps


# --- asking and reading --------------------------------------------------------------------------

def test_a_score_judge_asks_vllm_for_a_bounded_number_and_maps_it_to_0_1(make_judge):
    endpoint = Endpoint(lambda body: {"x = 4": "8", "x = 5": "2.5"}[body["messages"][-1]["content"][-5:]])
    judge = make_judge(endpoint, template="Solve {prompt}. Rate: x = {completion}", system_prompt="Be strict.",
                       max_answer_tokens=4)
    rewards = judge(["x+1=5"] * 2, ["4", "5"])
    assert isinstance(rewards, Explained) and rewards == [0.8, 0.25] and rewards.explanations == ["8", "2.5"]
    body = endpoint.bodies[0]
    assert body["model"] == "judge-model" and body["max_tokens"] == 4 and body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": "Be strict."}
    assert body["messages"][1]["content"] in ("Solve x+1=5. Rate: x = 4", "Solve x+1=5. Rate: x = 5")
    assert set(body["structured_outputs"]) == {"regex"}  # a number on the scale (test_parsing.py)
    assert endpoint.requests[0].url == "http://judge.test/v1/chat/completions"
    assert "authorization" not in endpoint.requests[0].headers


def test_another_endpoint_is_asked_for_a_json_schema_with_the_key(make_judge):
    endpoint = Endpoint(lambda body: '{"choice": "yes"}')
    judge = make_judge(endpoint, vllm=False, api_key="sk-test", mode="choice", template="{completion}?")
    assert judge(["p"], ["c"]) == [1.0]
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-test"
    schema = endpoint.bodies[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["choice"]["enum"] == ["yes", "no"]
    assert "structured_outputs" not in endpoint.bodies[0]


def test_the_task_prompt_and_dataset_columns_fill_the_template(make_judge):
    endpoint = Endpoint()
    judge = make_judge(endpoint, template="{prompt}|{completion}|{answer}")
    judge(["<chat>2+2</chat>"], ["4"], task_prompts=["2+2"], answer=[4], completion_lengths=[1])
    assert endpoint.bodies[0]["messages"] == [{"role": "user", "content": "2+2|4|4"}]


def test_a_column_the_dataset_lacks_is_none_with_a_warning_naming_it_and_asks_nothing(make_judge):
    endpoint = Endpoint()
    judge = make_judge(endpoint, template="{completion} vs {reference}")
    assert judge(["p", "p"], ["a", "b"], answer=["1", "1"]) == [None, None]
    assert endpoint.requests == []
    assert len(judge.warnings) == 1
    assert "2 of 2" in judge.warnings[0] and "'reference'" in judge.warnings[0] and "answer" in judge.warnings[0]


def test_an_unreadable_answer_is_none_with_the_raw_answer_in_the_warning(make_judge):
    judge = make_judge(Endpoint(lambda body: "excellent work" if "bad" not in str(body) else "3"))
    rewards = judge(["p", "p"], ["good", "bad"])
    assert rewards == [None, 0.3] and rewards.explanations == ["excellent work", "3"]
    assert len(judge.warnings) == 1 and "'excellent work'" in judge.warnings[0]
    assert judge.take_metrics()["unreadable"] == 1


def test_a_rank_judge_orders_each_group_once_and_every_completion_carries_the_groups_answer(make_judge):
    answers = {"A": '{"ranking": [2, 3, 1]}', "B": '{"ranking": [2, 1]}'}
    endpoint = Endpoint(lambda body: answers[body["messages"][0]["content"][0]])
    judge = make_judge(endpoint, mode="rank", template="{prompt}\n{completions}")
    rewards = judge(["A", "A", "A", "B", "B"], ["a1", "a2", "a3", "b1", "b2"])
    assert rewards == [0.0, 1.0, 0.5, 0.0, 1.0]
    assert rewards.explanations == [answers["A"]] * 3 + [answers["B"]] * 2
    asked = {body["messages"][0]["content"]: body for body in endpoint.bodies}
    assert set(asked) == {"A\n1. a1\n2. a2\n3. a3", "B\n1. b1\n2. b2"}
    ranking = asked["A\n1. a1\n2. a2\n3. a3"]["structured_outputs"]["json"]["properties"]["ranking"]
    assert len(ranking["enum"]) == 6 and [2, 3, 1] in ranking["enum"]  # each order of the group of 3


def test_a_ranking_that_is_not_an_order_gives_the_whole_group_none(make_judge):
    judge = make_judge(Endpoint(lambda body: '{"ranking": [1, 1, 2]}'), mode="rank", template="{completions}")
    assert judge(["A"] * 3, ["x", "y", "z"]) == [None, None, None]
    assert len(judge.warnings) == 1 and "3 of 3" in judge.warnings[0] and "[1, 1, 2]" in judge.warnings[0]


def test_the_dry_run_gets_each_answer_raw_and_parsed(make_judge):
    judge = make_judge(Endpoint(lambda body: "yes" if "right" in str(body) else "perhaps"), mode="choice",
                       template="{completion}")
    right, unsure, missing = judge.judge_rows(["p", "p", "p"], ["right", "hmm", "x"], {})
    assert (right.raw, right.value, right.error) == ("yes", 1.0, None)
    assert (unsure.raw, unsure.value) == ("perhaps", None) and "none of the labels" in unsure.error
    assert missing.value is None


# --- the cache -----------------------------------------------------------------------------------

def test_identical_requests_are_judged_once_in_flight_and_after(make_judge):
    endpoint = Endpoint(hold_s=0.05)
    judge = make_judge(endpoint)
    assert judge(["p"] * 4, ["same", "same", "same", "other"]) == [0.7] * 4
    assert len(endpoint.requests) == 2  # the three identical asked once, while in flight
    answers = judge.judge_rows(["p", "q"], ["same", "same"], {})
    assert [answer.cached for answer in answers] == [True, False]  # another prompt is another question
    metrics = judge.take_metrics()
    assert (metrics["calls"], metrics["cache_hits"], metrics["cache_hit_rate"]) == (3, 3, 0.5)


def test_a_failed_call_is_not_cached(make_judge):
    statuses = iter([400, 200])
    endpoint = Endpoint(lambda body: "5" if next(statuses) == 200 else httpx.Response(400, json={"error": "no"}))
    judge = make_judge(endpoint)
    assert judge(["p"], ["c"]) == [None]
    assert judge(["p"], ["c"]) == [0.5]
    assert len(endpoint.requests) == 2


# --- concurrency and limits ----------------------------------------------------------------------

def test_calls_in_flight_never_exceed_max_concurrency_across_scoring_threads(make_judge):
    endpoint = Endpoint(hold_s=0.02)
    judge = make_judge(endpoint, limits={"max_concurrency": 3})
    threads = [threading.Thread(target=judge, args=([f"p{t}"] * 8, [f"c{i}" for i in range(8)])) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(endpoint.requests) == 24
    assert endpoint.most_in_flight == 3 and judge.most_in_flight == 3


def test_requests_per_minute_hold_calls_back_in_the_window(make_judge):
    endpoint = Endpoint()
    judge = make_judge(endpoint, limits={"requests_per_minute": 2})
    limiter = judge._client.limiter
    limiter.sleep = _advance
    clock = iter(float(second) for second in range(0, 100_000, 7))  # each look at the clock: 7 s later
    limiter.clock = lambda: next(clock)
    started, acquire = [], limiter.acquire

    async def acquire_and_note(tokens):
        reservation = await acquire(tokens)
        started.append(reservation.at)
        return reservation

    limiter.acquire = acquire_and_note
    judge(["p"] * 6, [f"c{i}" for i in range(6)])
    assert len(endpoint.requests) == 6
    assert max(sum(1 for other in started if start <= other < start + 60) for start in started) == 2


async def _advance(seconds):
    """The limiter's sleep: the test's clock moves on its own."""


# --- faults --------------------------------------------------------------------------------------

def test_429_and_5xx_are_retried_honouring_retry_after_then_exponential_backoff(make_judge):
    answers = iter([httpx.Response(429, headers={"Retry-After": "7"}, json={"error": "slow down"}),
                    httpx.Response(503, text="overloaded"), httpx.Response(502), "9"])
    endpoint = Endpoint(lambda body: next(answers))
    judge = make_judge(endpoint)
    sleeps = record_sleeps(judge)
    assert judge(["p"], ["c"]) == [0.9]
    assert sleeps == [7.0, 1.0, 2.0]  # Retry-After, then 0.5 s doubled per retry
    assert judge.warnings == []
    metrics = judge.take_metrics()
    assert (metrics["calls"], metrics["retries"], metrics["failures"]) == (1, 3, 0)


def test_retries_stop_at_max_retries_with_none_and_the_servers_message(make_judge):
    endpoint = Endpoint(lambda body: httpx.Response(503, json={"error": {"message": "model is loading"}}))
    judge = make_judge(endpoint, limits={"max_retries": 2})
    record_sleeps(judge)
    assert judge(["p"], ["c"]) == [None]
    assert len(endpoint.requests) == 3
    assert "HTTP 503: model is loading (after 3 tries)" in judge.warnings[0]
    assert judge.take_metrics()["failures"] == 1


def test_a_client_error_is_not_retried(make_judge):
    endpoint = Endpoint(lambda body: httpx.Response(400, json={"error": {"message": "prompt too long"}}))
    judge = make_judge(endpoint)
    assert judge(["p"], ["c"]) == [None]
    assert len(endpoint.requests) == 1 and "HTTP 400: prompt too long" in judge.warnings[0]


def test_a_call_past_the_timeout_is_none_counted_and_warned(make_judge):
    endpoint = Endpoint(hold_s=30)
    judge = make_judge(endpoint, limits={"timeout_s": 0.05})
    assert judge(["p"], ["c"]) == [None]
    assert len(endpoint.requests) == 1  # a timeout is not retried: the run would wait for each try
    assert "no answer within 0.05 s" in judge.warnings[0]
    metrics = judge.take_metrics()
    assert (metrics["timeouts"], metrics["failures"]) == (1, 1)


def test_an_endpoint_that_is_gone_gives_none_after_retries_never_an_exception(make_judge):
    judge = make_judge(base_url=f"http://127.0.0.1:{free_port()}/v1", limits={"max_retries": 2})
    record_sleeps(judge)
    assert judge(["p", "p"], ["a", "b"]) == [None, None]
    assert "could not be reached" in judge.warnings[0] and "after 3 tries" in judge.warnings[0]
    assert judge.take_metrics()["retries"] == 4
    with pytest.raises(JudgeEndpointError, match="did not answer"):
        judge.check()


# --- check ---------------------------------------------------------------------------------------

def test_check_passes_on_an_endpoint_that_answers_with_a_one_token_call(make_judge):
    endpoint = Endpoint(lambda body: "OK")
    make_judge(endpoint, api_key="sk-good").check()
    assert endpoint.bodies[0]["max_tokens"] == 1


def test_a_refused_key_fails_check_with_the_servers_message(make_judge):
    refusal = {"error": {"message": "Incorrect API key provided: sk-bad", "type": "invalid_request_error"}}
    judge = make_judge(Endpoint(lambda body: httpx.Response(401, json=refusal)), api_key="sk-bad")
    with pytest.raises(JudgeEndpointError, match=r"judge 'quality': the endpoint at http://judge.test/v1 refused "
                                                 r"the API key \(HTTP 401: Incorrect API key provided: sk-bad\)"):
        judge.check()


def test_an_unknown_model_fails_check_naming_it(make_judge):
    judge = make_judge(Endpoint(lambda body: httpx.Response(404, json={"message": "The model does not exist."})))
    with pytest.raises(JudgeEndpointError, match="does not know the model 'judge-model'.*does not exist"):
        judge.check()


# --- metrics -------------------------------------------------------------------------------------

def test_metrics_count_tokens_latency_and_cost_per_interval_and_in_total(make_judge):
    judge = make_judge(Endpoint(lambda body: reply("5", prompt_tokens=1000, answer_tokens=10)),
                       input_cost_per_million=2.0, output_cost_per_million=8.0)
    judge(["p", "p"], ["a", "b"])
    first = judge.take_metrics()
    assert (first["calls"], first["prompt_tokens"], first["answer_tokens"]) == (2, 2000, 20)
    assert first["cost_usd"] == pytest.approx(2 * (1000 * 2 + 10 * 8) / 1e6) == first["cost_usd_total"]
    assert first["latency_s_max"] >= first["latency_s_mean"] > 0
    judge(["p"], ["c"])
    second = judge.take_metrics()
    assert second["calls"] == 1 and second["cost_usd_total"] == pytest.approx(first["cost_usd"] * 1.5)
    assert judge.take_metrics()["calls"] == 0
