"""The loop: gather a step's groups, train on them, push the weights, evaluate, report and
save, until max_steps or a cancel. Everything it uses is ready before it begins
(startup/ready.py); what stops those parts is the run's lifecycle, not the loop."""
import time

from worker.trainer.checkpoints.saving import save_checkpoint
from worker.trainer.inference.cpu_sharing import CoreHandover
from worker.trainer.loop.cores import hand_over_cores
from worker.trainer.loop.pipeline import PipelineReadings, training_turn
from worker.trainer.loop.step_reports import StepReports
from worker.trainer.rollout.gathering import Cancelled, Gathered, gather
from worker.trainer.rollout.metrics import rollout_metrics
from worker.trainer.startup.ready import ReadyParts
from worker.trainer.training.step import batch_advantages, train_step
from worker.trainer import metric_names as names


class TrainingLoop:
    def __init__(self, ready: ReadyParts):
        self.ready, self.config, self.state = ready, ready.config, ready.state
        self.reports = StepReports(ready.report, ready.config, ready.rewards, ready.eval_rewards)
        self.pipeline = PipelineReadings(ready.rollout, ready.staleness, ready.config)
        self.dropped_stale = 0  # groups too stale to train on, since the run (this attempt) began
        self.reload_noted = False

    def run(self) -> str:
        """succeeded or cancelled; an error raises (the run fails)."""
        ready = self.ready
        handover = hand_over_cores(ready)
        ctx = ready.training.training_context(
            self.config, before_micro_batch=handover.before_micro_batch if handover else None)
        throughput = _Throughput(tokens=0)
        while self.state.step < self.config.max_steps:
            step_started = time.perf_counter()
            try:
                gathered = self._gather()
            except Cancelled:
                self._save(last=True)
                ready.report.status("cancelled", f"cancelled at step {self.state.step}")
                return "cancelled"
            self._train_on(gathered, ctx, handover, throughput, step_started)
        # A run that says it succeeded has its checkpoints on the control plane (or says which stay
        # on this disk): its final model is there to download, and nothing is lost if this worker
        # goes away once it is done. A cancel does not wait: the supervisor's grace bounds it.
        if ready.evaluator is not None:
            ready.evaluator.wait()  # the last evaluation is part of the result
        if ready.served_judges is not None:
            ready.served_judges.check()  # and was scored by judges that still ran
        ready.checkpoints.close()
        ready.report.status("succeeded", f"trained {self.state.step} steps")
        return "succeeded"

    def _train_on(self, gathered: Gathered, ctx, handover: CoreHandover | None, throughput: "_Throughput",
                  step_started: float) -> None:
        ready, state = self.ready, self.state
        if ready.served_judges is not None:
            ready.served_judges.check()  # a judge server gone: its rewards in these groups are missing
        # Staleness as the drop rule saw it: against the policy these groups train, before
        # this step's weight sync moves the version on.
        groups, trained_version = gathered.groups, state.model_version
        pipeline = self._async_metrics(gathered)
        advantages = batch_advantages(groups, self.config.num_generations, self.config.scale_rewards)
        if not ready.generation_pause.pausing:
            ready.rollout.free_taken_slots()  # generation overlaps the step: refill at once
        with training_turn(ready.rollout, ready.generation_pause):  # and the weight sync that follows
            ready.crew.train(groups)  # the other processes train their share of the same groups
            metrics = train_step(ctx, groups, advantages)
            state.step += 1
            state.samples_seen += sum(len(g.completions) for g in groups)
            for group in groups:
                ready.frontier.consume(group.prompt_index)
            metrics.update(self._maybe_sync())
            self._maybe_evaluate()
            # Taking turns: the refill is sampled with the new weights, after the pause.
            ready.rollout.free_taken_slots()
        now = time.perf_counter()
        readings = self.pipeline.after_step(gathered, now - step_started)
        generated = throughput.since_last(ready.rollout.generated_tokens, now)
        metrics.update(rollout_metrics(groups), **pipeline, **readings,
                       **{names.SYSTEM_GENERATION_TOKENS_PER_S: generated, names.SYSTEM_STEP_TIME_S: now - step_started,
                          names.SYSTEM_MODEL_VERSION: state.model_version})
        if handover is not None:
            metrics[names.SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION] = handover.step_done()
        self.reports.metrics(state.step, metrics, groups)
        self.reports.samples(state.step, groups, advantages.values.tolist(), trained_version)
        last = state.step == self.config.max_steps
        if last or state.step % self.config.save_steps == 0:
            self._save(last=last)

    def _gather(self) -> Gathered:
        """One step's groups (rollout/gathering.py); stale ones are counted and their prompts used up."""
        ready, version = self.ready, self.state.model_version
        syncs = (self.state.step + 1) % self.config.weight_sync_steps == 0
        got = gather(ready.rollout, ready.staleness, ready.staleness.groups_per_step, version,
                     next_version=version + 1 if syncs else version,
                     cancelled=ready.report.cancel_requested.is_set)
        self.dropped_stale += len(got.dropped)
        for group in got.dropped:
            ready.frontier.consume(group.prompt_index)
        return got

    def _async_metrics(self, gathered: Gathered) -> dict[str, float]:
        rollout = self.ready.rollout
        staleness = [self.state.model_version - g.model_version for g in gathered.groups]
        return {names.ASYNC_STALENESS_MEAN: sum(staleness) / len(staleness), names.ASYNC_STALENESS_MAX: max(staleness),
                names.ASYNC_DROPPED_STALE: self.dropped_stale, names.ASYNC_QUEUE_DEPTH: rollout.queue_depth,
                names.ASYNC_IN_FLIGHT: rollout.in_flight, names.ASYNC_WAIT_FOR_ROLLOUTS_S: gathered.waited_s,
                names.ASYNC_WAIT_FOR_EXPIRING_S: gathered.waited_for_expiring_s}

    def _maybe_sync(self) -> dict[str, float]:
        """The sync's seconds as metrics: 0 on a step without one; its parts only with one."""
        ready = self.ready
        if self.state.step % self.config.weight_sync_steps:
            return {names.SYSTEM_WEIGHT_SYNC_S: 0.0}
        # An evaluation answers with the weights it started on: it ends before they change.
        waited = ready.evaluator.wait() if ready.evaluator is not None else 0.0
        self.state.model_version += 1
        ready.crew.gather_weights()
        pushed = ready.weight_sync.push(ready.training.served_model(), self.state.model_version)
        self._note_how_the_server_reloads()
        parts = {names.SYSTEM_WEIGHT_SYNC_PART.name(part=name): seconds
                 for name, seconds in ready.weight_sync.last_push_parts().items()}
        return {names.SYSTEM_WEIGHT_SYNC_S: pushed, names.SYSTEM_WAIT_FOR_EVALUATION_S: waited, **parts}

    def _note_how_the_server_reloads(self) -> None:
        """Once a run, which way the server took the weights (inference/direct_reload.py):
        what a slow weight sync is read against."""
        note = None if self.reload_noted else self.ready.weight_sync.last_push_note()
        if note:
            self.reload_noted = True
            self.ready.report.log(note)

    def _maybe_evaluate(self) -> None:
        step, evaluator = self.state.step, self.ready.evaluator
        if evaluator is not None and (step % self.config.eval_steps == 0 or step == self.config.max_steps):
            evaluator.start(step, self.state.model_version)

    def _save(self, last: bool = False) -> None:
        """`last`: the run's last checkpoint, which for LoRA also holds the merged model."""
        ready, state = self.ready, self.state
        state.data_position = ready.frontier.frontier
        training = ready.training
        path = save_checkpoint(ready.output_dir, state, training.unwrapped_model(), training.tokenizer,
                               training.optimizer, training.scheduler, merged=last,
                               on_folder_ready=lambda: ready.crew.save(state.step))
        ready.checkpoints.keep(path, state)


class _Throughput:
    """Tokens generated per second between two steps' ends (the first: since the loop began)."""

    def __init__(self, tokens: int):
        self.tokens, self.time = tokens, time.perf_counter()

    def since_last(self, tokens: int, now: float) -> float:
        rate = (tokens - self.tokens) / (now - self.time)
        self.tokens, self.time = tokens, now
        return rate
