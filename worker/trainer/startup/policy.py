"""The policy every trainer process loads: model, tokenizer, optimizer and schedule, and the
trainer state a resumed run goes on from."""
from pathlib import Path

from worker.trainer.checkpoints.saving import TrainerState, load_trainer_state
from worker.trainer.startup.starting_run import StartingRun
from worker.trainer.training.setup import TrainingParts, build_training_parts


def load_policy(run: StartingRun) -> tuple[TrainingParts, TrainerState]:
    """A checkpoint's state when resuming; a checkpoint started from gives its weights (with
    LoRA: its adapter), not its trainer state (the followers tell the two apart by their spec's
    resume_from)."""
    spec, crew = run.spec, run.crew
    # The other processes load the same checkpoint now, beside this one: told earlier, they
    # would wait in the first collective while this one fetched datasets (no timeout to spare).
    checkpoint = spec.resume_from or spec.init_from
    run.lifecycle.started(crew, crew.dismiss)  # told to stop once told to set up (a no-op before)
    crew.setup(checkpoint)
    parts = build_training_parts(spec.model, run.config, resume_from=checkpoint, topology=run.topology)
    crew.strategy = parts.sharing.strategy
    if run.topology.several or run.config.distributed != "auto":
        run.report.log(parts.sharing.describe(run.topology.world_size))
    return parts, _starting_state(run, parts)


def _starting_state(run: StartingRun, parts: TrainingParts) -> TrainerState:
    spec = run.spec
    if spec.resume_from:
        state = load_trainer_state(Path(spec.resume_from), parts.model, parts.optimizer, parts.scheduler)
        run.report.log(f"resumed from {spec.resume_from} at step {state.step}")
        return state
    if spec.init_from:
        run.report.log(f"started from the weights of checkpoint {run.config.init_checkpoint} "
                       f"({spec.init_from}); optimizer and step start afresh")
    return TrainerState(step=0, model_version=0, data_position=0)
