"""The rollout worker: an asyncio loop in a background thread that keeps vLLM busy.

It submits prompts while the staleness budget allows, scores each finished
group (in a thread pool, so scoring never blocks generation) and puts it on a
bounded queue the training loop reads. A dead server stops the worker with an
error the trainer reports; it never leaves the trainer waiting forever.
"""
import asyncio
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from worker.trainer.rollout.client import CompletionsClient
from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.rollout.staleness import StalenessPolicy


class PromptSource:
    """Next prompt to sample: index, rendered text, token ids, reward columns."""

    def __init__(self, next_prompt: Callable[[], tuple[int, str, list[int], dict]]):
        self.next_prompt = next_prompt


class RolloutWorker:
    def __init__(self, client: CompletionsClient, prompts: PromptSource, scorer: Scorer,
                 policy: StalenessPolicy, num_generations: int, max_inflight: int, queue_maxsize: int,
                 current_version: Callable[[], int]):
        self.client, self.prompts, self.scorer, self.policy = client, prompts, scorer, policy
        self.num_generations, self.max_inflight = num_generations, max_inflight
        self.current_version = current_version
        self.groups: queue.Queue[Group] = queue.Queue(maxsize=queue_maxsize)
        self.error: BaseException | None = None
        self.in_flight = 0
        self.generated_tokens = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="rollout", daemon=True)
        self._scoring = ThreadPoolExecutor(max_workers=2, thread_name_prefix="score")

    # --- the training loop's side ---
    def start(self) -> "RolloutWorker":
        self._thread.start()
        return self

    def take(self, timeout_s: float = 1.0) -> Group | None:
        """The next scored group, or None if none arrived in time. Raises if the worker died."""
        if self.error is not None:
            raise RuntimeError(f"rollout worker stopped: {self.error}") from self.error
        try:
            group = self.groups.get(timeout=timeout_s)
        except queue.Empty:
            return None
        return group

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._scoring.shutdown(wait=False, cancel_futures=True)

    @property
    def queue_depth(self) -> int:
        return self.groups.qsize()

    # --- the background thread ---
    def _main(self) -> None:
        try:
            asyncio.run(self._submit_forever())
        except BaseException as exc:  # surfaced to the trainer through take()
            self.error = exc

    async def _submit_forever(self) -> None:
        tasks: set[asyncio.Task] = set()
        try:
            while not self._stop.is_set():
                budget = self.policy.submit_budget(
                    ahead=self.in_flight + self.groups.qsize(), max_inflight=self.max_inflight,
                    in_flight=self.in_flight, queue_room=self.groups.maxsize - self.groups.qsize() - self.in_flight)
                for _ in range(budget):
                    tasks.add(asyncio.create_task(self._one_group(*self.prompts.next_prompt())))
                    self.in_flight += 1
                await self._wait_for_room(tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.client.close()

    async def _wait_for_room(self, tasks) -> None:
        """Sleeps until a group finishes (or briefly), then collects finished tasks and raises their failures."""
        if tasks:
            await asyncio.wait(tasks, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
        else:
            await asyncio.sleep(0.05)
        finished = {task for task in tasks if task.done()}
        tasks -= finished
        failures = [task.exception() for task in finished if task.exception() is not None]
        if failures:
            raise failures[0]

    async def _one_group(self, index: int, text: str, prompt_ids: list[int], columns: dict) -> None:
        # Counted as in flight until it is on the queue, scoring included, so the
        # budget never lets more be ahead of the trainer than the queue can hold.
        try:
            version = self.current_version()
            completions = await self.client.sample(prompt_ids, self.num_generations)
            self.generated_tokens += sum(len(c.token_ids) for c in completions)
            group = Group(prompt_index=index, prompt_text=text, prompt_ids=prompt_ids, columns=columns,
                          completions=completions, model_version=version)
            await asyncio.get_running_loop().run_in_executor(self._scoring, self.scorer.score, group)
            while not self._stop.is_set():
                try:
                    self.groups.put_nowait(group)
                    return
                except queue.Full:
                    await asyncio.sleep(0.05)
        finally:
            self.in_flight -= 1
