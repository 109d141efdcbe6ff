"""The loop given ready parts: a cancel while it gathers saves a last checkpoint and says at
which step; a run already at max_steps trains nothing, waits for its evaluation and succeeds; a
served judge's server gone fails the run before it trains on groups its judges could not score."""
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")

from worker.trainer.checkpoints.saving import TrainerState  # noqa: E402
from worker.trainer.config import TrainingConfig  # noqa: E402
from worker.trainer.data.order import ConsumedFrontier  # noqa: E402
from worker.trainer.distributed.crew import Crew  # noqa: E402
from worker.trainer.distributed.topology import SINGLE  # noqa: E402
from worker.trainer.inference.time_slicing import GenerationPause  # noqa: E402
from worker.trainer.loop import training_loop  # noqa: E402
from worker.trainer.rewards.judges.served import JudgeServerLost  # noqa: E402
from worker.trainer.rollout.groups import Completion, Group  # noqa: E402
from worker.trainer.rollout.staleness import StalenessPolicy  # noqa: E402
from worker.trainer.startup.ready import ReadyParts  # noqa: E402


class Report:
    def __init__(self, cancelled: bool):
        self.cancel_requested = threading.Event()
        if cancelled:
            self.cancel_requested.set()
        self.statuses: list[tuple[str, str]] = []

    def status(self, status: str, message: str = "") -> None:
        self.statuses.append((status, message))


class NoRollouts:
    """A rollout worker with nothing in flight and nothing to give."""
    generated_tokens = queue_depth = in_flight = 0

    def in_flight_versions(self):
        return []

    def take(self, timeout_s=1.0, max_version=None):
        return None


class OneGroupAtATime(NoRollouts):
    """A rollout worker that always has a scored group to give."""

    def take(self, timeout_s=1.0, max_version=None):
        return Group(prompt_index=0, prompt_text="p", prompt_ids=[1], columns={}, model_version=0,
                     completions=[Completion([1], [-1.0], "4", "stop")])

    def free_taken_slots(self):
        pass


class Keeper:
    def __init__(self):
        self.kept, self.closed = [], False

    def keep(self, folder, state):
        self.kept.append((folder, state.step))

    def close(self):
        self.closed = True


def ready_parts(state: TrainerState, report: Report, evaluator=None, rollout=None, served_judges=None) -> ReadyParts:
    config = TrainingConfig(max_steps=4)
    training = SimpleNamespace(training_context=lambda config, before_micro_batch=None: None,
                               unwrapped_model=lambda: None, tokenizer=None, optimizer=None, scheduler=None,
                               on_gpu=False)
    return ReadyParts(config=config, output_dir=Path("unused"), report=report, checkpoints=Keeper(),
                      crew=Crew(SINGLE), state=state, frontier=ConsumedFrontier(state.data_position),
                      training=training, rewards=[], eval_rewards=[], weight_sync=None, rollout=rollout or NoRollouts(),
                      staleness=StalenessPolicy(config.max_staleness, 2, config.weight_sync_steps),
                      cpu_sharing="overlap", generation_pause=GenerationPause(None), evaluator=evaluator,
                      served_judges=served_judges)


@pytest.fixture
def saved(monkeypatch) -> list[tuple[int, bool]]:
    """(step, merged) of each checkpoint the loop writes."""
    writes = []

    def save(output_dir, state, *parts, merged=False, on_folder_ready=None):
        writes.append((state.step, merged))
        return Path(f"step-{state.step}")

    monkeypatch.setattr(training_loop, "save_checkpoint", save)
    return writes


def test_a_cancel_while_gathering_saves_a_last_checkpoint_and_says_at_which_step(saved):
    ready = ready_parts(TrainerState(step=2, model_version=2, data_position=16), Report(cancelled=True))
    assert training_loop.TrainingLoop(ready).run() == "cancelled"
    assert saved == [(2, True)] and ready.checkpoints.kept == [(Path("step-2"), 2)]
    assert ready.report.statuses == [("cancelled", "cancelled at step 2")]
    assert not ready.checkpoints.closed  # a cancel does not wait for uploads: the lifecycle closes them


def test_a_run_already_at_max_steps_waits_for_its_evaluation_and_succeeds(saved):
    evaluator = SimpleNamespace(waits=0)
    evaluator.wait = lambda: setattr(evaluator, "waits", evaluator.waits + 1)
    ready = ready_parts(TrainerState(step=4, model_version=4, data_position=32), Report(cancelled=False), evaluator)
    assert training_loop.TrainingLoop(ready).run() == "succeeded"
    assert saved == [] and evaluator.waits == 1 and ready.checkpoints.closed
    assert ready.report.statuses == [("succeeded", "trained 4 steps")]


class JudgeServerGone:
    def check(self):
        raise JudgeServerLost("the served judges' vLLM server for /models/judge was killed by SIGKILL (signal 9)")


def test_a_served_judges_server_gone_fails_the_run_before_it_trains_on_the_groups(saved, monkeypatch):
    trained = []
    monkeypatch.setattr(training_loop, "train_step", lambda *args: trained.append(args))
    ready = ready_parts(TrainerState(step=0, model_version=0, data_position=0), Report(cancelled=False),
                        rollout=OneGroupAtATime(), served_judges=JudgeServerGone())
    with pytest.raises(JudgeServerLost, match="SIGKILL"):
        training_loop.TrainingLoop(ready).run()
    assert trained == [] and ready.state.step == 0


def test_a_judge_server_gone_by_the_last_evaluation_fails_the_run_instead_of_succeeding(saved):
    evaluator = SimpleNamespace(wait=lambda: None)
    ready = ready_parts(TrainerState(step=4, model_version=4, data_position=32), Report(cancelled=False), evaluator,
                        served_judges=JudgeServerGone())
    with pytest.raises(JudgeServerLost):
        training_loop.TrainingLoop(ready).run()
    assert ready.report.statuses == []
