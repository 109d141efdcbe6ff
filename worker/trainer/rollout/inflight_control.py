"""max_inflight_tasks: auto. The rollout worker's in-flight cap, set after each step from what
the step measured, within the staleness bound.

Little's law gives the groups that must be in flight for the trainer never to wait: the rate at
which groups are wanted (at most what the scoring threads get through) times a group's latency
(submission until scored, less any wait for a scoring thread), both averaged over steps. The cap
moves only on evidence: raised (by half at least, up to Little's law, not past HEADROOM times it)
when the trainer waited behind it; lowered by a quarter when groups were dropped stale or the
queue held more than OVERFULL_STEPS steps' groups unwaited for, but never below Little's law nor
to a cap starved behind within REMEMBER_STEPS steps (hysteresis). Otherwise it holds, between
`floor` (1, or a wave) and the staleness bound or the queue's size.
Details: docs/capabilities/trainer.md#groups-in-flight-max_inflight_tasks.
"""
import math
from dataclasses import dataclass

WAITED_SHARE = 0.05    # a step that waited for rollouts more than this share of its time was starved
CAPPED_SHARE = 0.1     # the cap held submissions back in more than this share of the polls: capped
OVERFULL_STEPS = 2     # queued groups beyond this many steps' worth, with no wait: more than needed
RAISE, LOWER = 1.5, 0.75
HEADROOM = 2           # a raise stops at this many times what Little's law calls for
REMEMBER_STEPS = 20    # a cap the trainer starved behind is not lowered to again for this many steps
SMOOTHING = 0.5        # weight of the newest step in the averaged rate and latency


@dataclass(frozen=True)
class StepOutcome:
    """What one step measured, for the controller."""
    step_s: float                  # the step's seconds, end to end
    waited_s: float                # of which waiting for rollouts (not for a group about to expire)
    groups_trained: int
    dropped_stale: int             # groups dropped as too stale in this step
    queue_depth: int               # groups queued at the step's end
    held_by_cap: float             # share of the worker's polls the in-flight cap held back
    group_latency_s: float | None  # mean seconds from submission to scored, less any wait for a
                                   # scoring thread; None: none finished
    group_scoring_busy_s: float | None = None  # of which a scoring thread's seconds on the group


def cap_bounds(useful_ahead: int, queue_maxsize: int, wave: int) -> tuple[int, int]:
    """(floor, ceiling) of the auto cap: the staleness bound and the queue's size cap it; one
    group, or a wave where the server generates in waves, is the least."""
    ceiling = max(1, min(useful_ahead, queue_maxsize))
    return min(max(1, wave), ceiling), ceiling


def starting_cap(groups_per_step: int, floor: int, ceiling: int) -> int:
    """One step's groups: what the first step needs, before anything is measured."""
    return min(max(groups_per_step, floor), ceiling)


class InflightController:
    def __init__(self, cap: int, groups_per_step: int, floor: int, ceiling: int, scoring_threads: int | None = None):
        self.floor, self.ceiling, self.groups_per_step = floor, ceiling, groups_per_step
        self.scoring_threads = scoring_threads   # None: scoring is not counted as a limit
        self.cap = self._bounded(cap)
        self.trained_per_s: float | None = None  # groups the trainer trains a second, when it does not wait
        self.latency_s: float | None = None      # a group's seconds from submission to scored (no thread wait)
        self.scoring_busy_s: float | None = None  # a scoring thread's seconds on a group
        self._starved_at: list[tuple[int, int]] = []  # (step, cap) of the recent steps starved behind the cap
        self._steps = 0

    @property
    def needed(self) -> int | None:
        """Little's law: the groups in flight that keep the trainer from waiting, or the scoring
        threads busy where they cannot keep up (None: not measured yet)."""
        if self.trained_per_s is None or self.latency_s is None:
            return None
        return math.ceil(self._wanted_per_s * self.latency_s)

    @property
    def _wanted_per_s(self) -> float:
        """Groups a second the pipeline can usefully deliver: the trainer's pace, or the scoring
        threads' where slower."""
        assert self.trained_per_s is not None
        if not self.scoring_threads or not self.scoring_busy_s:
            return self.trained_per_s
        return min(self.trained_per_s, self.scoring_threads / self.scoring_busy_s)

    def update(self, step: StepOutcome) -> int:
        """The cap for the next step."""
        self._steps += 1
        self._measure(step)
        self.cap = self._bounded(self._decide(step))
        return self.cap

    def _decide(self, step: StepOutcome) -> int:
        needed, cap = self.needed, self.cap
        starved = step.waited_s > WAITED_SHARE * step.step_s
        if step.dropped_stale:
            return self._lowered(math.floor(cap * LOWER), needed)
        if starved and step.held_by_cap > CAPPED_SHARE:
            self._starved_at.append((self._steps, cap))
            return self._raised(cap, needed)
        if not starved and step.queue_depth > OVERFULL_STEPS * self.groups_per_step:
            return self._lowered(math.floor(cap * LOWER), needed)
        return cap

    def _raised(self, cap: int, needed: int | None) -> int:
        raised = math.ceil(cap * RAISE)
        if needed is None:
            return raised
        return max(cap, min(max(raised, needed), HEADROOM * needed))

    def _lowered(self, lowered: int, needed: int | None) -> int:
        """Lowered to `lowered` at most, yet kept above a cap the trainer recently starved behind
        and at what Little's law needs; never raised by it."""
        self._starved_at = [(step, cap) for step, cap in self._starved_at if self._steps - step < REMEMBER_STEPS]
        starved_below = max((cap + 1 for _, cap in self._starved_at), default=0)
        return min(self.cap, max(lowered, needed or 0, starved_below))

    def _measure(self, step: StepOutcome) -> None:
        training_s = step.step_s - step.waited_s
        if step.groups_trained and training_s > 0:
            self.trained_per_s = _averaged(self.trained_per_s, step.groups_trained / training_s)
        if step.group_latency_s is not None:
            self.latency_s = _averaged(self.latency_s, step.group_latency_s)
        if step.group_scoring_busy_s is not None:
            self.scoring_busy_s = _averaged(self.scoring_busy_s, step.group_scoring_busy_s)

    def _bounded(self, cap: int) -> int:
        return min(max(cap, self.floor), self.ceiling)


def _averaged(average: float | None, value: float) -> float:
    return value if average is None else SMOOTHING * value + (1 - SMOOTHING) * average
