"""Which ControlPlane method calls which of the API's operations (by operationId), and which
operations the client leaves out on purpose, with the reason. tests/client/test_covers_the_schema.py
holds both tables against the API's schema: an operation in neither, or an entry naming an
operation or a method that does not exist, fails it.
"""

CALLED_BY: dict[str, tuple[str, ...]] = {
    "datasets_list": ("datasets",),
    "datasets_create": ("upload_dataset", "create_hub_dataset", "create_generated_dataset"),
    "datasets_retrieve": ("dataset",),
    "datasets_partial_update": ("update_dataset",),
    "datasets_destroy": ("delete_dataset",),
    "reward_functions_list": ("rewards",),
    "reward_functions_create": ("create_reward",),
    "reward_functions_retrieve": ("reward",),
    "reward_functions_partial_update": ("update_reward",),
    "reward_functions_destroy": ("delete_reward",),
    "reward_functions_dry_run_create": ("dry_run_reward",),
    "reward_functions_dry_runs_retrieve": ("reward_dry_run",),
    "configs_list": ("configs",),
    "configs_create": ("create_config",),
    "configs_retrieve": ("config",),
    "configs_partial_update": ("update_config",),
    "configs_destroy": ("delete_config",),
    "configs_presets_list": ("config_presets",),
    "environments_list": ("environments",),
    "environments_create": ("create_environment",),
    "environments_retrieve": ("environment",),
    "environments_partial_update": ("update_environment",),
    "environments_destroy": ("delete_environment",),
    "environments_dry_run_create": ("dry_run_environment",),
    "environments_dry_runs_retrieve": ("environment_dry_run",),
    "runs_list": ("runs",),
    "runs_create": ("create_run",),
    "runs_retrieve": ("run",),
    "runs_partial_update": ("update_run",),
    "runs_destroy": ("delete_run",),
    "runs_start_create": ("start_run",),
    "runs_cancel_create": ("cancel_run",),
    "runs_resume_create": ("resume_run",),
    "runs_clone_create": ("clone_run",),
    "runs_logs_list": ("logs",),
    "runs_alarms_list": ("alarms",),
    "runs_metrics_retrieve": ("metrics", "last_metrics"),
    "runs_samples_list": ("samples",),
    "runs_sample_steps_retrieve": ("sample_steps",),
    "run_diagnosis": ("diagnosis",),
    "runs_checkpoints_list": ("checkpoints",),
    "runs_checkpoints_download_retrieve": ("download_checkpoint",),
    "runs_checkpoints_push_create": ("push_checkpoint",),
    "runs_pushes_list": ("pushes", "push"),
    "run_evaluations": ("evaluations",),
    "run_evaluation": ("evaluation_outcomes",),
    "run_eval_examples": ("eval_examples",),
    "run_eval_example": ("eval_example",),
    "compare_runs": ("compare",),
    "compare_samples": ("compare_samples",),
    "compare_eval_examples": ("compare_eval_examples",),
    "compare_eval_example": ("compare_eval_example",),
    "workers_retrieve": ("workers",),
}

_WORKER = "a worker's, with its run's bearer token (worker/trainer/); a user's token is refused"
_REPLACE = "a PUT must send every field; the client changes what it is given with PATCH ({})"

EXCLUDED: dict[str, str] = {
    "runs_events_create": f"ingest of a run's events: {_WORKER}",
    "runs_dataset_retrieve": f"the run's dataset file for its trainer: {_WORKER}",
    "runs_secrets_retrieve": f"the run's judges' API keys: {_WORKER}",
    "runs_uploads_retrieve": f"a checkpoint upload's state: {_WORKER}",
    "runs_uploads_begin_create": f"a checkpoint upload's declaration: {_WORKER}",
    "runs_uploads_files_retrieve": f"a checkpoint upload's bytes received: {_WORKER}",
    "runs_uploads_files_update": f"a checkpoint upload's chunk: {_WORKER}",
    "runs_uploads_complete_create": f"a checkpoint upload's manifest: {_WORKER}",
    "runs_uploads_archive_retrieve": (f"a stored checkpoint for a resuming worker: {_WORKER}; a user downloads "
                                      "the same with download_checkpoint"),
    "datasets_update": _REPLACE.format("update_dataset"),
    "reward_functions_update": _REPLACE.format("update_reward"),
    "configs_update": _REPLACE.format("update_config"),
    "environments_update": _REPLACE.format("update_environment"),
    "runs_update": _REPLACE.format("update_run"),
}

# Methods that call the API but are not an operation of its schema, with what they read.
OUTSIDE_THE_SCHEMA: dict[str, str] = {}

# Operations the Python client calls that no `grpo` command does, with the reason.
NOT_ON_THE_COMMAND_LINE: dict[str, str] = {}
