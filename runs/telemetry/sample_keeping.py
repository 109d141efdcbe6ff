"""What a run keeps of its completions, in words for the run page's completions panel: read
from the run's frozen config (samples_groups_per_step, samples_every_steps, log_completions;
an older run's num_completions_to_log as the trainer reads it)."""
from worker.trainer.config import TrainingConfig, translated_sample_knobs

KNOBS = ("log_completions", "samples_groups_per_step", "samples_every_steps",
         "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations")


def ordinal(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th')}"


def samples_kept(config: dict) -> str:
    """"Keeps every completion of every step.", "Keeps 2 groups of every 10th step (...)."."""
    fields = TrainingConfig.model_fields
    values = {name: fields[name].default for name in KNOBS} | translated_sample_knobs(config)
    if not values["log_completions"]:
        return "Keeps no completions (log_completions is off); the metrics count every one."
    every = values["samples_every_steps"]
    steps = "every step" if every == 1 else f"every {ordinal(every)} step"
    groups = values["per_device_train_batch_size"] * values["gradient_accumulation_steps"] // values["num_generations"]
    kept = values["samples_groups_per_step"]
    if kept == 0 or kept >= groups:
        return f"Keeps every completion of {steps}" + ("." if every == 1 else "; the metrics count every step.")
    return (f"Keeps {kept} group{'s' if kept > 1 else ''} of {steps} ({groups} a step, picked at random "
            "with the run's seed); the metrics count every group.")
