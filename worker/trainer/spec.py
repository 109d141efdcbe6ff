"""The launch spec: everything a trainer needs, frozen as JSON when a run starts.

The control plane builds it; the Celery task carries it; the trainer reads it.
Nothing else is shared between them, which is what lets a GPU node run a
trainer knowing only the broker and the control plane's URL.
"""
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from worker.trainer.config import TrainingConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetSpec(_Strict):
    kind: Literal["file", "hub", "generator", "environment"]
    path: str | None = Field(None, description="The file on the control plane's disk (kind=file): read "
                             "directly by a worker that shares that disk.")
    url: str | None = Field(None, description="Where a worker fetches the file with the run's token (kind=file).")
    sha256: str | None = Field(None, pattern="^[0-9a-f]{64}$", description="The file's content (kind=file).")
    size_bytes: int | None = Field(None, ge=0)
    format: Literal["jsonl", "csv", "parquet"] | None = None
    hub_id: str | None = None
    split: str = Field("train", description="The hub dataset's split; a verifiers environment's train or eval rows.")
    generator: str | None = None
    verifiers_id: str | None = Field(None, description="The verifiers environment whose rows these are "
                                     "(kind=environment), loaded on the worker with `params`.")
    params: dict = Field(default_factory=dict, description="The generator's parameters, or the verifiers "
                         "environment's arguments.")
    prompt_column: str = "prompt"


class RewardSpec(_Strict):
    name: str
    kind: Literal["builtin", "code", "judge", "reward_model"]
    weight: float = Field(1.0, allow_inf_nan=False)
    builtin: str | None = None
    params: dict = Field(default_factory=dict, description="A built-in's parameters, or a judge's "
                         "(rewards/judges/catalog.py JudgeParams) or reward model's (RewardModelParams).")
    source: str | None = None
    verifier: bool = Field(False, description="Its pass/fail is checked, not judged (accuracy, exact match): "
                           "a judge's disagreement with it is a metric and an alarm.")
    has_api_key: bool = Field(False, description="A judge whose endpoint asks for a key: the trainer fetches it "
                              "from LaunchSpec.secrets_url with the run's token; the spec never holds it.")
    internal_host_allowed: bool = Field(False, description=(
        "An endpoint judge whose host an operator lists in JUDGE_ENDPOINT_HOSTS: it may resolve to an "
        "internal address. Any other endpoint judge's connections are refused when its host resolves to "
        "one at the call (rewards/judges/public_hosts.py)."))


class EnvironmentSpec(_Strict):
    """How a rollout proceeds past the first answer (worker/trainer/environments/): a built-in
    (calculator tools, multi-turn feedback), Python code run in the sandbox, or a verifiers
    environment installed on the worker."""
    name: str
    kind: Literal["builtin", "code", "verifiers"]
    builtin: str | None = Field(None, description="calculator or feedback (kind=builtin).")
    params: dict = Field(default_factory=dict, description="The built-in's parameters, or the verifiers "
                         "environment's arguments.")
    source: str | None = Field(None, description="Python defining step(messages, row) (kind=code).")
    verifiers_id: str | None = Field(None, description="The verifiers environment's id (kind=verifiers).")


class IngestSpec(_Strict):
    url: str
    token: str


class SharedDiskSpec(_Strict):
    """A file the control plane wrote beside the run's output folder: a worker that reads this
    secret there shares its disk, and leaves its checkpoints where the control plane reads them."""
    path: str
    secret: str = Field(min_length=16)


class LaunchSpec(_Strict):
    run_id: int
    attempt: int = Field(1, ge=1, description="1 for the first start, +1 per resume.")
    model: str
    dataset: DatasetSpec
    rewards: list[RewardSpec] = Field(default_factory=list, description="At least one, unless the environment is "
                                      "a verifiers environment: its own rubric scores the episodes.")
    environment: EnvironmentSpec | None = Field(None, description="Multi-turn rollouts; none = one completion "
                                                "per rollout.")
    eval_dataset: DatasetSpec | None = Field(None, description="Where evaluation examples come from; none = "
                                             "config.eval_holdout_fraction of `dataset`.")
    eval_rewards: list[RewardSpec] = Field(default_factory=list, description="What judges an evaluation; "
                                           "empty = the training rewards.")
    config: TrainingConfig
    ingest: IngestSpec | None = Field(None, description="Control plane to report to; none = local JSONL only.")
    uploads_url: str | None = Field(None, description="Where checkpoints are uploaded (the run's .../uploads/, "
                                    "with the ingest token); none = they stay where they are written.")
    shared_disk: SharedDiskSpec | None = Field(None, description="How a worker on the control plane's disk knows it.")
    output_dir: str
    inference_url: str | None = Field(None, description="vLLM server; set by the supervisor that starts it.")
    inference_api_key: str | None = Field(None, description="The key the vLLM server at inference_url asks of "
                                          "every request but /health; set by the supervisor that starts it.")
    inference_urls: list[str] = Field(default_factory=list, description="vLLM servers on machines of their own "
                                      "(config.inference_machines), inference_url first; all ask inference_api_key. "
                                      "Set by the supervisor; empty: the one server at inference_url.")
    judge_gpu_ids: str | None = Field(None, description="CUDA_VISIBLE_DEVICES for the served judges' vLLM "
                                      "(config.judge_gpus of the worker's split); set by the supervisor. None: "
                                      "the CPU, or the policy server's GPUs.")
    orders_secret: str | None = Field(None, min_length=32, description="Signs the leading trainer process's "
                                      "orders to the others (distributed/order_codec.py); set by the supervisor "
                                      "in the spec file it writes for the trainer, never by the control plane.")
    secrets_url: str | None = Field(None, description="Where the trainer fetches its judges' API keys with the "
                                    "ingest token (runs/rewards/secrets.py); none: no reward has one.")
    resume_from: str | None = Field(None, description="Checkpoint directory to continue from.")
    resume_url: str | None = Field(None, description="Where a worker without resume_from on its disk fetches "
                                   "that checkpoint (a tar, with the ingest token).")
    init_from: str | None = Field(None, description="Checkpoint directory whose weights (with LoRA: adapter) "
                                  "start the policy (config.init_checkpoint): not its optimizer state or step. "
                                  "Ignored when resuming.")
    init_url: str | None = Field(None, description="Where a worker without init_from on its disk fetches that "
                                 "checkpoint (a tar, with the ingest token, which may fetch it and nothing else).")

    @model_validator(mode="after")
    def _scored(self):
        if not self.rewards and (self.environment is None or self.environment.kind != "verifiers"):
            raise ValueError("rewards: at least one reward function, unless the environment is a verifiers "
                             "environment (its rubric scores the episodes)")
        return self
