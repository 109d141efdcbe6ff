"""Judges the worker serves itself: a second vLLM server per judge model, beside the policy's.

Each distinct model among a run's `endpoint: served` judges gets one server, however many
judges name it (they differ in template, not in weights). It is launched like the policy's
(inference/launch.py) with what a judge needs instead of what training needs: its own port and
API key, the served name "judge", no LoRA and no weight transfer (nothing is ever pushed to
it), a context long enough for the longest question its judges ask, and on a CPU no pinning
to cores of its own (it shares them: a judge works while generation does). On GPUs it runs on
`gpu_ids`, the worker's judge_gpus of its split (worker/gpu_split.py), spread over the servers;
with judge_gpus 0 those are the policy server's GPUs, and the judges take what
vllm_gpu_memory_utilization leaves of their memory.
"""
import dataclasses
import json
import logging
import math
from pathlib import Path

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.launch import Device, Launch, build_launch, installed_device, new_api_key
from worker.trainer.inference.server import VLLMServer, free_port
from worker.trainer.models.paths import resolve_model_path
from worker.trainer.processes.groups import ended_how
from worker.trainer.rewards.judges.catalog import JudgeParams, template_fields
from worker.trainer.rewards.judges.judge import JudgeEndpoint
from worker.trainer.spec import RewardSpec

log = logging.getLogger(__name__)

SERVED_NAME = "judge"  # what requests name the model, whatever its path
# Tokens beyond the template's own text: the chat template's, and dataset columns it names.
CHAT_MARGIN_TOKENS = 64
COLUMNS_MARGIN_TOKENS = 512
NUMBERING_TOKENS = 4  # "12. " before each completion a rank judge sees
CONTEXT_CAP = 32768  # where the model's own limit is unknown (a hub id not prepared here)
SHARED_GPU_CEILING = 0.95  # of a GPU the policy's server and the judges' take together
MIN_GPU_SHARE = 0.05


FAILURE_TAIL_LINES = 8  # of a judge server's output, in the run's failure message


class JudgeServingRefused(ValueError):
    """The served judges cannot run as configured (their share of a shared GPU is too small)."""


class JudgeServerLost(RuntimeError):
    """A served judge's vLLM server ended during the run: its judges would give no reward at all."""


def served_judges(specs: list[RewardSpec]) -> list[JudgeParams]:
    """The params of the judges among `specs` that the worker serves."""
    judges = [JudgeParams.model_validate(spec.params) for spec in specs if spec.kind == "judge"]
    return [params for params in judges if params.endpoint == "served"]


def context_needed(params: JudgeParams, config: TrainingConfig) -> int:
    """Tokens the judge's longest question and its answer may take: the template (a token is a
    character at least; most are 3 or 4), the task's prompt, and the completion, or for a rank
    judge the whole group of them numbered."""
    template = len(params.template) + len(params.system_prompt) + CHAT_MARGIN_TOKENS
    if template_fields(params.template) - {"prompt", "completion", "completions"}:
        template += COLUMNS_MARGIN_TOKENS
    if params.mode == "rank":
        judged = config.num_generations * (config.max_completion_length + NUMBERING_TOKENS)
    else:
        judged = config.max_completion_length
    return template + config.max_prompt_length + judged + params.max_answer_tokens


def model_context(model_dir: str) -> int:
    """The longest context the model was built for (its config's max_position_embeddings), else CONTEXT_CAP."""
    config = Path(model_dir) / "config.json"
    try:
        return int(json.loads(config.read_text())["max_position_embeddings"])
    except (OSError, ValueError, KeyError, TypeError):
        return CONTEXT_CAP


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where one judge server runs: its GPUs (None: the CPU, or the parent's), its engines, its share of each GPU."""
    gpu_ids: str | None
    engines: int
    memory_share: float


def placements(servers: int, gpu_ids: str | None, device: Device, config: TrainingConfig) -> list[Placement]:
    """Each server's GPUs: an equal slice of `gpu_ids` (one engine per GPU of it) where there are
    enough, else a GPU each in turn, shared by the servers on it, which split its memory."""
    if device == "cpu" or not servers:
        return [Placement(None, 1, config.vllm_gpu_memory_utilization)] * servers
    gpus = [gpu.strip() for gpu in (gpu_ids or "").split(",") if gpu.strip()]
    if len(gpus) >= servers:
        width = len(gpus) // servers
        slices, per_gpu = [gpus[index * width:(index + 1) * width] for index in range(servers)], 1
    else:  # no ids: the parent's CUDA_VISIBLE_DEVICES, shared by them all
        slices = [[gpus[index % len(gpus)]] if gpus else [] for index in range(servers)]
        per_gpu = math.ceil(servers / len(gpus)) if gpus else servers
    share = _memory_share(config, per_gpu)
    return [Placement(",".join(chosen) or None, max(1, len(chosen)), share) for chosen in slices]


def _memory_share(config: TrainingConfig, servers_per_gpu: int) -> float:
    """vllm_gpu_memory_utilization on GPUs of the judges' own; on the policy server's, what it leaves."""
    if config.judge_gpus:
        return config.vllm_gpu_memory_utilization / servers_per_gpu
    share = round(SHARED_GPU_CEILING - config.vllm_gpu_memory_utilization, 6) / servers_per_gpu  # 0.95 - 0.9: 0.05
    if share < MIN_GPU_SHARE:
        raise JudgeServingRefused(
            f"judge_gpus is 0, so the served judges share the policy server's GPUs, but "
            f"vllm_gpu_memory_utilization ({config.vllm_gpu_memory_utilization:g}) leaves "
            f"{servers_per_gpu} judge server(s) {max(share, 0):.3g} of a GPU's memory each (under "
            f"{MIN_GPU_SHARE:g}, of the {SHARED_GPU_CEILING:g} the servers may take together): lower "
            f"vllm_gpu_memory_utilization (to 0.6, say) or give the judges GPUs of their own with judge_gpus")
    return share


def judge_launch(model_dir: str, config: TrainingConfig, context: int, placement: Placement, device: Device,
                 port: int, api_key: str) -> Launch:
    """`vllm serve` for a judge: the policy's launch with a judge's settings (see the module's docstring)."""
    settings = config.model_copy(update={
        "vllm_max_model_len": context, "lora": False, "weight_sync_backend": "filesystem",
        "cpu_sharing": "overlap",  # not pinned to the cores split_cores keeps for the policy's server
        "vllm_tensor_parallel_size": 1, "vllm_data_parallel_size": placement.engines,
        "vllm_gpu_memory_utilization": placement.memory_share})
    launch = build_launch(model_dir, settings, port=port, device=device, gpu_ids=placement.gpu_ids, api_key=api_key)
    argv = list(launch.argv)
    argv[argv.index("--served-model-name") + 1] = SERVED_NAME
    env = {name: value for name, value in launch.env.items() if name != "VLLM_SERVER_DEV_MODE"}  # no weight sync
    return dataclasses.replace(launch, argv=argv, env=env, served_model_name=SERVED_NAME)


class ServedJudges:
    """The vLLM servers of a run's served judges: `start()` spawns them, `join()` waits for them."""

    def __init__(self, specs: list[RewardSpec], config: TrainingConfig, output_dir: Path,
                 gpu_ids: str | None = None, device: Device | None = None):
        self.config, self.output_dir = config, Path(output_dir)
        judges = served_judges(specs)
        self._model_dirs = {params.model: resolve_model_path(params.model) for params in judges}
        contexts: dict[str, int] = {}
        for params in judges:
            model_dir = self._model_dirs[params.model]
            contexts[model_dir] = max(contexts.get(model_dir, 0), context_needed(params, config))
        device = device or (installed_device() if judges else "cpu")
        spots = placements(len(contexts), gpu_ids, device, config)
        self.launches: dict[str, Launch] = {}
        for (model_dir, wanted), placement in zip(contexts.items(), spots):
            context = min(wanted, model_context(model_dir))
            if context < wanted:
                log.warning("judge model %s holds %d tokens; its judges' longest questions may take %d: longer "
                            "ones will be answered with None", model_dir, context, wanted)
            self.launches[model_dir] = judge_launch(model_dir, config, context, placement, device,
                                                    port=free_port(), api_key=new_api_key())
        self.servers: dict[str, VLLMServer] = {}

    def __bool__(self) -> bool:
        return bool(self.launches)

    def start(self) -> "ServedJudges":
        """Spawns every judge server; does not wait for them (they load beside the policy's)."""
        for number, (model_dir, launch) in enumerate(self.launches.items(), start=1):
            self.servers[model_dir] = VLLMServer(launch, log_path=self.output_dir / f"vllm-judge-{number}.log",
                                                 startup_timeout_s=self.config.vllm_startup_timeout_s).start()
        return self

    def join(self) -> None:
        """Waits for every server's /health; one that dies or does not answer in time stops them
        all and raises ServerStartError with its last output, as the policy's server does."""
        try:
            for server in self.servers.values():
                server.wait_until_healthy()
        except Exception:
            self.stop()
            raise

    def failure(self) -> str | None:
        """How the first judge server that ended did so, with its last output; None while all run.
        A judge whose server is gone answers None for every completion: the loop fails the run on
        this instead of training on rewards that are missing."""
        for model_dir, server in self.servers.items():
            code = server.exit_code()
            if code is not None:
                tail = "\n".join(server.output_tail(FAILURE_TAIL_LINES))
                return (f"the served judges' vLLM server for {model_dir} {ended_how(code)} (its log: "
                        f"{server.log_path}); its last output:\n{tail}")
        return None

    def check(self) -> None:
        """Raises JudgeServerLost when a judge server has ended."""
        if failure := self.failure():
            raise JudgeServerLost(failure)

    def endpoint(self, model: str) -> JudgeEndpoint:
        """Where the judges naming `model` (as their params do) send their questions."""
        if model not in self._model_dirs:
            raise KeyError(f"no served judge names the model {model!r}; served: {', '.join(self._model_dirs)}")
        launch = self.launches[self._model_dirs[model]]
        return JudgeEndpoint(base_url=launch.url + "/v1", model=launch.served_model_name, api_key=launch.api_key,
                             vllm=True)

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()

    def __enter__(self) -> "ServedJudges":
        self.start().join()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
