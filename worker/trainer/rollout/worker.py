"""The rollout worker: an asyncio loop in a background thread that keeps vLLM busy.

It submits prompts while the staleness budget allows, scores each finished group in a thread pool
(scoring never blocks generation, nor a judge's network wait another group's scoring) and queues
it for the training loop, oldest policy version first. It knows the versions of the groups still
in flight, so the loop can wait for one that would otherwise expire (rollout/gathering.py), and
whether the server has work, so a trainer splitting the CPU's cores with it knows when it may take
them all (inference/cpu_sharing.py). A dead server stops it with an error the trainer reports,
never leaving the trainer waiting. It counts, for each step's metrics, which bound held its
submissions back (or that generation was paused) and how long its groups took (pipeline_window.py);
its in-flight cap may be set while it runs (max_inflight_tasks: auto, rollout/inflight_control.py).
Details: docs/concepts.md#the-async-loop.
"""
import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Protocol

from worker.trainer.rollout.arrivals import OldestFirstQueue
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.pipeline_window import PipelineCounters, PipelineWindow
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.rollout.staleness import StalenessPolicy


# Rule rewards and the sandbox keep a core busy: two groups scored at once. A judge waits on the
# network instead, for seconds: then every group that can be in flight gets a thread, so that no
# group's judging waits behind another's, up to a bound on the threads one process keeps.
SCORING_THREADS, MAX_SCORING_THREADS = 2, 64


def scoring_threads(waits_on_network: bool, groups_in_flight: int) -> int:
    """Threads that score groups: `groups_in_flight` is the most groups submitted and not yet
    queued (min of max_inflight, the queue's size and the staleness bound)."""
    if not waits_on_network:
        return SCORING_THREADS
    return max(SCORING_THREADS, min(groups_in_flight, MAX_SCORING_THREADS))



class Sampler(Protocol):
    """What the worker samples groups from: the completions client (inference/completions_client.py), or an
    environment's episode sampler over it (environments/episodes.py)."""

    async def sample(self, prompt_ids: list[int], n: int, columns: dict | None = None,
                     overrides: dict | None = None) -> list[Completion]: ...

    async def close(self) -> None: ...

class PromptSource:
    """Next prompt to sample: index, rendered text, token ids, reward columns, and optionally the
    task's prompt as the dataset has it (Group.task_prompt: what judges read)."""

    def __init__(self, next_prompt: Callable[[], tuple]):
        self.next_prompt = next_prompt


class RolloutWorker:
    def __init__(self, client: "Sampler", prompts: PromptSource, scorer: Scorer,
                 staleness: StalenessPolicy, num_generations: int, max_inflight: int, queue_maxsize: int,
                 current_version: Callable[[], int], wave: int = 1, scoring_threads: int = SCORING_THREADS):
        self.client, self.prompts, self.scorer, self.staleness = client, prompts, scorer, staleness
        self.num_generations = num_generations
        self.max_inflight = max_inflight  # the cap in force: fixed, or set each step (set_max_inflight)
        self.wave = wave  # groups submitted at once at the least (rollout/staleness.py)
        self.current_version = current_version
        self.groups = OldestFirstQueue()
        self.queue_maxsize = queue_maxsize  # enforced by the submit budget
        self.error: BaseException | None = None
        # Groups submitted and not yet queued (scoring included), by the policy version they
        # were submitted at: counted until queued, so the budget never lets more be ahead
        # of the trainer than the queue can hold.
        self._in_flight_versions: Counter[int] = Counter()
        self._versions_lock = threading.Lock()
        self._sampling = 0  # groups whose requests are with the server (not yet scoring)
        self.generated_tokens = 0
        self.counters = PipelineCounters()  # what held submissions back, how long groups took
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="rollout", daemon=True)
        self.scoring_threads = scoring_threads
        self._scoring = ThreadPoolExecutor(max_workers=scoring_threads, thread_name_prefix="score")

    # --- the training loop's side ---
    def start(self) -> "RolloutWorker":
        self._thread.start()
        return self

    def take(self, timeout_s: float = 1.0, max_version: int | None = None) -> Group | None:
        """The oldest scored group (with `max_version`: sampled at that version or before), or
        None if none arrived in time. Raises if the worker died."""
        if self.error is not None:
            raise RuntimeError(f"rollout worker stopped: {self.error}") from self.error
        return self.groups.take(timeout_s, max_version)

    def set_max_inflight(self, cap: int) -> None:
        """A new in-flight cap (max_inflight_tasks: auto, rollout/inflight_control.py): the next
        poll submits up to it; groups already beyond it finish."""
        self.max_inflight = cap

    @contextmanager
    def generation_paused(self) -> Iterator[None]:
        """The server is paused for the block (take_turns, while a step trains): the polls
        meanwhile are counted as paused, not as held by a bound (rollout/pipeline_window.py)."""
        self.counters.pause(True)
        try:
            yield
        finally:
            self.counters.pause(False)

    def take_window(self) -> PipelineWindow:
        """What the worker measured of itself since the last call (rollout/pipeline_window.py)."""
        return self.counters.take()

    def put_back(self, group: Group) -> None:
        """A group taken but not trained on this step: the next step can take it."""
        self.groups.put_back(group)

    def discard(self, group: Group) -> None:
        """A group taken that will not be trained (too stale): its place is refilled at once."""
        self.groups.discard()

    def free_taken_slots(self) -> None:
        """The groups taken so far are being trained: new groups may take their places.

        Until then they count as ahead of the trainer, so that the training loop decides
        when the refill is submitted: on a CPU, once the step's weight sync is done and the
        server is paused, so that the new prompts are sampled (and their prefill run) with
        the new weights after the step instead of delaying the pause before it.
        """
        self.groups.release_taken()

    @property
    def in_flight(self) -> int:
        with self._versions_lock:
            return sum(self._in_flight_versions.values())

    def in_flight_versions(self) -> list[int]:
        """The policy versions of the groups submitted and not yet queued, oldest first."""
        with self._versions_lock:
            return sorted(version for version, count in self._in_flight_versions.items() if count)

    def server_has_work(self) -> bool:
        """Whether vLLM is generating, or is about to: groups freed by the training loop are
        submitted within one poll of the background thread, and the trainer must not take
        the server's cores in between."""
        with self._versions_lock:
            if self._sampling:
                return True
        return self._budget() > 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._scoring.shutdown(wait=False, cancel_futures=True)

    @property
    def queue_depth(self) -> int:
        return len(self.groups)

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
                for _ in range(self._budget(counted=True)):
                    version = self.current_version()
                    with self._versions_lock:
                        self._in_flight_versions[version] += 1
                    tasks.add(asyncio.create_task(self._one_group(version, *self.prompts.next_prompt())))
                await self._wait_for_room(tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.client.close()

    def _budget(self, counted: bool = False) -> int:
        """Groups that may be submitted now; `counted`: a submit poll, which counts the bound
        that held it back when there is no room (rollout/pipeline_window.py)."""
        held, in_flight, max_inflight = self.groups.held, self.in_flight, self.max_inflight
        ahead, queue_room = in_flight + held, self.queue_maxsize - held - in_flight
        budget = self.staleness.submit_budget(ahead=ahead, max_inflight=max_inflight, in_flight=in_flight,
                                              queue_room=queue_room, wave=self.wave)
        if counted:
            self.counters.polled(None if budget else
                                 self.staleness.holding_bound(ahead, max_inflight, in_flight, queue_room))
        return budget

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

    def _timed_score(self, group: Group) -> float:
        """Scores the group on a scoring thread; the seconds it took there, without the wait for the thread."""
        started = time.perf_counter()
        self.scorer.score(group)
        return time.perf_counter() - started

    async def _one_group(self, version: int, index: int, text: str, prompt_ids: list[int], columns: dict,
                         task_prompt: str | None = None) -> None:
        scored = None
        try:
            submitted = time.perf_counter()
            with self._versions_lock:
                self._sampling += 1
            try:
                completions = await self.client.sample(prompt_ids, self.num_generations, columns)
            finally:
                with self._versions_lock:
                    self._sampling -= 1
            self.generated_tokens += sum(len(c.token_ids) for c in completions)
            group = Group(prompt_index=index, prompt_text=text, prompt_ids=prompt_ids, columns=columns,
                          completions=completions, model_version=version, task_prompt=task_prompt)
            generated = time.perf_counter()
            busy_s = await asyncio.get_running_loop().run_in_executor(self._scoring, self._timed_score, group)
            self.counters.group_finished(generated - submitted, time.perf_counter() - generated, busy_s)
            scored = group
        finally:
            # Queued and out of the in-flight versions at once: the training loop never
            # sees a group in neither place (and stops waiting for it too early).
            with self._versions_lock:
                if scored is not None:
                    self.groups.put(scored)
                self._in_flight_versions[version] -= 1
