"""Runs evaluations in a thread of their own, against the server the rollouts use.

One at a time: an evaluation starts right after a weight sync, so the server holds the version
it names, and the training loop waits for it only before the next sync would change those
weights under it (`wait`). Anything that goes wrong (the server, a reward) is a warning in the
run's log; the next evaluation tries again, and the run goes on.
"""
import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from worker.trainer.evaluation.eval_set import EvalExample
from worker.trainer.evaluation.outcomes import answer_records, summary
from worker.trainer.inference.completions_client import CompletionsClient
from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.metric_names import EVAL_PASS_AT_1, EVAL_REWARD_MEAN, EVAL_SECONDS

if TYPE_CHECKING:
    from worker.trainer.environments import episodes as episode_play

log = logging.getLogger("worker.trainer")
CONCURRENT_REQUESTS = 32
CONCURRENT_SCORING = 16


def eval_sampling(config) -> dict:
    """Greedy for one answer per example; sampled at eval_temperature for pass@k."""
    greedy = config.eval_samples == 1
    return {"max_tokens": config.max_completion_length, "temperature": 0.0 if greedy else config.eval_temperature,
            "top_p": 1.0, "repetition_penalty": config.repetition_penalty}


class Evaluator:
    def __init__(self, examples: list[EvalExample], scorer: Scorer, config, report,
                 server_url: str, served_name: Callable[[], str], transport=None, episodes=None,
                 api_key: str | None = None):
        self.examples, self.scorer, self.report = examples, scorer, report
        self.samples, self.threshold = config.eval_samples, config.eval_pass_threshold
        self.sampling, self.timeout_s = eval_sampling(config), config.vllm_request_timeout_s
        self.server_url, self.served_name, self.api_key = server_url, served_name, api_key
        self.transport = transport  # tests answer for the server
        self.episodes = episodes  # an EpisodeRunner: a run on an environment is evaluated on episodes
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()  # the run is ending: an evaluation cut short is no news
        self.last_step: int | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, step: int, model_version: int) -> None:
        """Evaluates the server's current weights (`model_version`) as of `step`, in the background."""
        self.wait()
        self.last_step = step
        self._thread = threading.Thread(target=self._evaluate, args=(step, model_version),
                                        name=f"evaluation-{step}", daemon=True)
        self._thread.start()

    def wait(self, timeout_s: float | None = None) -> float:
        """Blocks until the running evaluation (if any) ends; returns the seconds waited."""
        if self._thread is None:
            return 0.0
        started = time.perf_counter()
        self._thread.join(timeout_s)
        return time.perf_counter() - started

    def stop(self) -> None:
        """The run ends without waiting for an evaluation in flight (a cancel, a failure)."""
        self._stopped.set()

    # --- in the evaluation's thread ---
    def _evaluate(self, step: int, model_version: int) -> None:
        started = time.perf_counter()
        try:
            groups = asyncio.run(self._answer_all(model_version))
            self._score_all(groups)
            answers = [answer_records(group, self.threshold) for group in groups]
            metrics = summary(groups, answers, self.samples, time.perf_counter() - started)
            self.report.evaluation(step, model_version, [
                {"index": example.index, "key": example.key, "prompt": example.prompt_text, "answers": per_example}
                for example, per_example in zip(self.examples, answers)], metrics)
            self.report.log(f"evaluation at step {step}: pass@1 {metrics[EVAL_PASS_AT_1]:.3f}, mean reward "
                            f"{metrics[EVAL_REWARD_MEAN]:.3f} on {len(groups)} examples "
                            f"({metrics[EVAL_SECONDS]:.1f} s)")
        except Exception as exc:  # an evaluation never fails the run
            if self._stopped.is_set():
                return
            log.exception("evaluation at step %s failed", step)
            self.report.log(f"evaluation at step {step} failed, and is tried again at the next eval_steps: "
                            f"{type(exc).__name__}: {exc}", level="warning")

    def _score_all(self, groups: list[Group]) -> None:
        """Groups scored side by side: a judge waits on the network for each, and the training loop
        waits for this evaluation before its next weight sync."""
        with ThreadPoolExecutor(max_workers=max(1, min(len(groups), CONCURRENT_SCORING)),
                                thread_name_prefix="eval-score") as pool:
            list(pool.map(self.scorer.score, groups))

    async def _answer_all(self, model_version: int) -> list[Group]:
        client = CompletionsClient(self.server_url, self.served_name(), self.sampling, timeout_s=self.timeout_s,
                                   retries=1, backoff_s=0.5, transport=self.transport, api_key=self.api_key)
        limit = asyncio.Semaphore(CONCURRENT_REQUESTS)
        sampler: CompletionsClient | episode_play.EpisodeSampler = client
        if self.episodes is not None:
            from worker.trainer.environments.episodes import EpisodeSampler

            sampler = EpisodeSampler(client, self.episodes)

        async def answer(example: EvalExample) -> Group:
            async with limit:
                completions = await sampler.sample(example.prompt_ids, self.samples, example.columns)
            return Group(prompt_index=example.index, prompt_text=example.prompt_text, prompt_ids=example.prompt_ids,
                         columns=example.columns, completions=completions, model_version=model_version,
                         task_prompt=example.task_prompt)
        try:
            return list(await asyncio.gather(*(answer(example) for example in self.examples)))
        finally:
            await client.close()
