"""A pipeline under a steady load on a simulated clock, for the auto in-flight cap's tests: the
rollout worker's budget (the real StalenessPolicy) and counts (the real PipelineCounters), groups
generated in fixed seconds, scored by a fixed number of threads in fixed seconds each (waiting,
first come first served, for a free one), and a trainer that takes a step's groups, frees their
places and trains for fixed seconds. No time passes: the clock is a number."""
import random
from dataclasses import dataclass, field

from worker.trainer.rollout.inflight_control import InflightController, StepOutcome, cap_bounds, starting_cap
from worker.trainer.rollout.pipeline_window import INFLIGHT_CAP, PipelineCounters
from worker.trainer.rollout.staleness import StalenessPolicy

TICK_S = 0.05  # the worker polls this often (rollout/worker.py)


@dataclass(frozen=True)
class Load:
    groups_per_step: int = 4
    train_s: float = 4.0           # a step's training, once it has its groups
    generation_s: float = 8.0      # a group's generation
    jitter: float = 0.0            # generation seconds vary by up to this share, seeded
    scoring_s: float = 0.1         # a scoring thread's seconds on a group
    scoring_threads: int = 2
    max_staleness: int = 8
    queue_maxsize: int = 256
    drop_every: int = 0            # every so many steps one group is dropped stale (0: never)


@dataclass
class Simulated:
    caps: list[int] = field(default_factory=list)      # the cap after each step
    waited_s: list[float] = field(default_factory=list)  # each step's wait for rollouts


def run_steady(load: Load, steps: int, seed: int = 0) -> Simulated:
    policy = StalenessPolicy(load.max_staleness, load.groups_per_step)
    floor, ceiling = cap_bounds(policy.useful_ahead, load.queue_maxsize, wave=1)
    controller = InflightController(starting_cap(load.groups_per_step, floor, ceiling), load.groups_per_step,
                                    floor, ceiling, scoring_threads=load.scoring_threads)
    return _Pipeline(load, policy, controller, random.Random(seed)).run(steps)


class _Pipeline:
    def __init__(self, load: Load, policy: StalenessPolicy, controller: InflightController, rng: random.Random):
        self.load, self.policy, self.controller, self.rng = load, policy, controller, rng
        self.counters, self.now = PipelineCounters(), 0.0
        self.generating: list[tuple[float, float]] = []   # (submitted, generated at)
        self.waiting: list[tuple[float, float]] = []      # generated, waiting for a scoring thread
        self.scoring: list[tuple[float, float, float]] = []  # (submitted, generated, scored at)
        self.threads_free_at = [0.0] * load.scoring_threads
        self.queued = self.taken = 0

    @property
    def in_flight(self) -> int:
        return len(self.generating) + len(self.waiting) + len(self.scoring)

    def run(self, steps: int) -> Simulated:
        result = Simulated()
        for step in range(1, steps + 1):
            started = self.now
            while self._take() < self.load.groups_per_step:
                self._tick()
            waited_s, self.taken = self.now - started, 0  # taken, and freed at once (generation overlaps)
            training_ends = self.now + self.load.train_s
            while self.now < training_ends:
                self._tick()
            result.waited_s.append(waited_s)
            result.caps.append(self.controller.update(self._outcome(step, waited_s, self.now - started)))
        return result

    def _take(self) -> int:
        """Takes what is queued, up to a step's groups; the groups taken so far."""
        taking = min(self.queued, self.load.groups_per_step - self.taken)
        self.queued, self.taken = self.queued - taking, self.taken + taking
        return self.taken

    def _outcome(self, step: int, waited_s: float, step_s: float) -> StepOutcome:
        window = self.counters.take()
        dropped = int(bool(self.load.drop_every) and step % self.load.drop_every == 0)
        return StepOutcome(step_s=step_s, waited_s=waited_s, groups_trained=self.load.groups_per_step,
                           dropped_stale=dropped, queue_depth=self.queued,
                           held_by_cap=window.share_held_by(INFLIGHT_CAP),
                           group_latency_s=window.group_latency_s, group_scoring_busy_s=window.group_scoring_busy_s)

    def _tick(self) -> None:
        self.now += TICK_S
        self._submit()
        self._finish_generation()
        self._start_scoring()
        self._finish_scoring()

    def _submit(self) -> None:
        cap, in_flight, held = self.controller.cap, self.in_flight, self.queued + self.taken
        ahead, room = in_flight + held, self.load.queue_maxsize - held - in_flight
        budget = self.policy.submit_budget(ahead=ahead, max_inflight=cap, in_flight=in_flight, queue_room=room)
        self.counters.polled(None if budget else self.policy.holding_bound(ahead, cap, in_flight, room))
        for _ in range(budget):
            seconds = self.load.generation_s * (1 + self.load.jitter * (2 * self.rng.random() - 1))
            self.generating.append((self.now, self.now + seconds))

    def _finish_generation(self) -> None:
        done = sorted((g for g in self.generating if g[1] <= self.now), key=lambda g: g[1])
        self.generating = [g for g in self.generating if g[1] > self.now]
        self.waiting.extend(done)

    def _start_scoring(self) -> None:
        for thread, free_at in enumerate(self.threads_free_at):
            if self.waiting and free_at <= self.now:
                submitted, generated = self.waiting.pop(0)
                self.threads_free_at[thread] = self.now + self.load.scoring_s
                self.scoring.append((submitted, generated, self.now + self.load.scoring_s))

    def _finish_scoring(self) -> None:
        for submitted, generated, scored in [s for s in self.scoring if s[2] <= self.now]:
            self.counters.group_finished(generated - submitted, scored - generated, self.load.scoring_s)
            self.queued += 1
        self.scoring = [s for s in self.scoring if s[2] > self.now]
