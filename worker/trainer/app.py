"""The async GRPO trainer: rollouts stream in from vLLM while the training loop consumes them.

    python -m worker.trainer --spec spec.json      or      run_trainer(spec_dict)

Given a launch spec it loads the policy, starts (or joins) a vLLM server, runs
the rollout worker in the background and trains until max_steps, a cancel
request, or an error — reporting metrics, samples, checkpoints and status to
the control plane throughout.
"""
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

from worker.trainer.checkpoints.keeping import keeper_for
from worker.trainer.checkpoints.saving import TrainerState, load_trainer_state, save_checkpoint
from worker.trainer.data.loading import load_dataset, render_prompt, reward_columns
from worker.trainer.data.order import ConsumedFrontier, PromptOrder
from worker.trainer.distributed.crew import Crew
from worker.trainer.distributed.topology import SINGLE, Topology
from worker.trainer.inference.cpu_sharing import CoreHandover, allowed_cpus, generation_cpus, sharing_mode
from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.processes.lifetime import kill_me_with_parent, process_age_s
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.rewards.loader import RewardLoader, check_reward_specs, needs_sandbox, served_judge_specs
from worker.trainer.rewards.sandbox import SandboxPool
from worker.trainer.rollout.client import CompletionsClient, sampling_params
from worker.trainer.rollout.gathering import Cancelled, Gathered, gather
from worker.trainer.rollout.groups import task_prompt_text
from worker.trainer.rollout.metrics import rollout_metrics, sample_records
from worker.trainer.rollout.sample_keeping import kept_groups
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.rollout.worker import PromptSource, RolloutWorker, scoring_threads
from worker.trainer.spec import LaunchSpec
from worker.trainer.weight_sync.backends import make_weight_sync
from worker.trainer.weight_sync.server_api import ServerPause, VllmAdminClient

if TYPE_CHECKING:
    from datasets import Dataset

    from worker.trainer.inference.server import VLLMServer
    from worker.trainer.rewards.judges.served import ServedJudges
    from worker.trainer.rollout.scoring import RewardFunction
    from worker.trainer.environments.base import Environment
    from worker.trainer.evaluation.evaluator import Evaluator
    from worker.trainer.training.setup import TrainingParts
    from worker.trainer.training.step import StepContext
    from worker.trainer.weight_sync.interface import WeightSync

log = logging.getLogger("worker.trainer")


class Trainer:
    """Rank 0's trainer, the only one in a single process: with several, the others follow its
    orders (distributed/follower.py) through `crew`."""

    def __init__(self, spec: LaunchSpec, topology: Topology = SINGLE):
        self.spec, self.config = spec, spec.config
        self.topology, self.crew = topology, Crew(topology, secret=spec.orders_secret)
        self.output_dir = Path(spec.output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.report = ReportingSession(spec.ingest, f"trainer:{spec.attempt}", self.output_dir / "events")
        # Listed by an event on the control plane's disk, else uploaded to it (checkpoint_keeping.py).
        self.checkpoints = keeper_for(spec, self.output_dir, self.report)
        self.state = TrainerState(step=0, model_version=0, data_position=0)
        # Set up by _prepare in this order, stopped by _shutdown; None until then.
        self.reward_sandbox: SandboxPool | None = None
        self.served_judges: ServedJudges | None = None  # the judges' own vLLM server(s), beside the policy's
        self.reward_loader: RewardLoader | None = None  # owns the judges and reward models it built
        self.rewards: list[RewardFunction] = []
        self.eval_rewards: list[RewardFunction] = []  # empty: the evaluation scores with self.rewards
        self.dataset: Dataset | None = None
        self.eval_dataset: Dataset | None = None  # held out, or the spec's eval_dataset; None: no evaluation
        self.evaluator: Evaluator | None = None
        self.environment: Environment | None = None  # multi-turn rollouts (environments/)
        self.own_server: VLLMServer | None = None  # None when the supervisor started the server
        self.parts: TrainingParts | None = None
        self.server_url, self.served_name = "", ""
        self.server_api_key: str | None = None  # the server asks it of every request but /health
        self.server_admin: VllmAdminClient | None = None
        self.server_pause: ServerPause | None = None
        self.weight_sync: WeightSync | None = None
        self.tool_format = "text"  # how an environment's tool calls are written (environments/tool_calls.py)
        self.cpu_sharing = "overlap"  # how vLLM and the trainer share the CPU (inference/cpu_sharing.py)
        self.generation_pause = GenerationPause(None)
        self.staleness: StalenessPolicy | None = None
        self.frontier = ConsumedFrontier(0)
        self.rollout: RolloutWorker | None = None
        self.core_handover: CoreHandover | None = None
        self.dropped_stale = 0
        self.reload_noted = False

    # --- lifecycle -----------------------------------------------------------
    def run(self) -> str:
        self.report.start()
        self.report.status("starting")
        try:
            self._prepare()
            self.report.status("running")
            outcome = self._train()
        except Exception as exc:
            log.exception("training failed")
            reason = f"{type(exc).__name__}: {exc}"
            self.report.log(reason, level="error")
            self.report.status("failed", reason)
            outcome = "failed"
        finally:
            self._shutdown()
        return outcome

    def _shutdown(self) -> None:
        try:
            self.crew.dismiss()
        except Exception:  # the others may be gone already; torchrun ends them with us
            log.exception("while dismissing the other trainer processes")
        for part in (self.evaluator, self.rollout, self.environment, self.reward_loader, self.reward_sandbox,
                     self.served_judges, self.weight_sync, self.server_admin, self.own_server):
            if part is not None:
                try:
                    part.stop() if hasattr(part, "stop") else part.close()
                except Exception:  # shutting down: keep going, the others still need stopping
                    log.exception("while stopping %s", type(part).__name__)
        self.checkpoints.close()
        self.report.close()

    # --- preparation ------------------------------------------------------------
    def _prepare(self) -> None:
        # Python and library imports before this point are part of the start-up shown.
        process_s, started = process_age_s(), time.monotonic()
        self._refuse_paths()
        self._fetch_checkpoint_to_resume()
        self._fetch_checkpoint_to_start_from()
        self._start_reward_sandbox()
        check_reward_specs(self.spec.rewards + self.spec.eval_rewards)  # refused before anything loads
        api_keys = self._fetch_api_keys()
        self.dataset, self.eval_dataset = self._load_datasets()
        # vLLM loads in its own process while this one loads the policy: start it first, and the
        # judges' server(s) with it.
        self._spawn_server()
        self._spawn_judges()
        loading = time.monotonic()
        self._load_policy()
        loaded = time.monotonic()
        self._join_judges()
        self._load_rewards(api_keys)
        self._load_environment()
        self._join_server()
        self._check_endpoint_judges()
        self._start_rollouts()
        self._start_evaluations()
        self._report_setup(process_s=process_s, load_s=loaded - loading,
                           inference_wait_s=time.monotonic() - loaded, setup_s=time.monotonic() - started)

    def _refuse_paths(self) -> None:
        """Names, not paths, checked before anything is loaded: a spec from an older control plane
        may name another run's checkpoint folder as its model or a local folder as its dataset
        (models/paths.py, data/loading.py); the run fails saying which."""
        from worker.trainer.data.loading import checked_hub_id
        from worker.trainer.models.paths import ModelRefused, model_problem

        if problem := model_problem(self.spec.model):
            raise ModelRefused(problem)
        for dataset in (self.spec.dataset, self.spec.eval_dataset):
            if dataset is not None and dataset.kind == "hub":
                checked_hub_id(dataset.hub_id or "")

    def _start_reward_sandbox(self) -> None:
        code_environment = self.spec.environment is not None and self.spec.environment.kind == "code"
        if not needs_sandbox(self.spec.rewards + self.spec.eval_rewards) and not code_environment:
            return
        # One process per scoring thread (the rollout worker scores two groups at a time).
        self.reward_sandbox = SandboxPool(size=2)
        self.reward_sandbox.warm_up()
        self.report.log(f"reward sandbox ready: {self.reward_sandbox.size} processes, "
                        f"confinement: {self.reward_sandbox.confinement}")

    def _fetch_api_keys(self) -> dict[str, str]:
        """The endpoint judges' keys, from the control plane with the run's token (judges/keys.py);
        a key missing fails the run here. The log names the rewards, never a key."""
        from worker.trainer.rewards.judges.keys import fetch_api_keys

        token = self.spec.ingest.token if self.spec.ingest else None
        keys = fetch_api_keys(self.spec.rewards + self.spec.eval_rewards, self.spec.secrets_url, token,
                              on_wait=self._say_waiting)
        if keys:
            self.report.log(f"API keys fetched for reward(s) {', '.join(map(repr, keys))}")
        return keys

    def _spawn_judges(self) -> None:
        """One vLLM server per model the served judges name (judges/served.py), started beside the
        policy's, on the judges' GPUs of the worker's split (the CPU here)."""
        specs = served_judge_specs(self.spec.rewards + self.spec.eval_rewards)
        if not specs:
            return
        from worker.trainer.rewards.judges.served import ServedJudges

        logs = self.output_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.served_judges = ServedJudges(specs, self.config, logs, gpu_ids=self.spec.judge_gpu_ids).start()

    def _join_judges(self) -> None:
        """Waits for the judges' server(s); one that does not start fails the run as the policy's would."""
        if self.served_judges is None:
            return
        started = time.monotonic()
        self.served_judges.join()
        self.report.log(f"served judges ready ({time.monotonic() - started:.1f} s waited after the policy loaded)")

    def _load_rewards(self, api_keys: dict[str, str]) -> None:
        """Training and evaluation rewards; a reward in both is built once (one judge, one cache).
        A reward model runs on the policy's device: the CPU here, the trainer's GPU on GPUs."""
        self.reward_loader = RewardLoader(self.reward_sandbox, api_keys=api_keys, served=self.served_judges,
                                          device=str(self.parts.accelerator.device),
                                          # an unreadable answer (with its raw text), a timeout: the run's log
                                          on_warning=lambda message: self.report.log(message, level="warning"))
        self.rewards = self.reward_loader.load(self.spec.rewards)
        self.eval_rewards = self.reward_loader.load(self.spec.eval_rewards)

    def _check_endpoint_judges(self) -> None:
        """One tiny call to each judge at a URL: an endpoint refusing its key (or not knowing the
        model) fails the run now, with its answer, instead of giving None for every completion."""
        judges = self.reward_loader.endpoint_judges()
        for judge in judges:
            judge.check()
        if judges:
            self.report.log(f"judge endpoint(s) answered: {', '.join(repr(judge.name) for judge in judges)}")

    def _load_policy(self) -> None:
        """Model, tokenizer, optimizer and schedule; a checkpoint's state when resuming."""
        from worker.trainer.training.setup import build_training_parts

        # The other processes load the same checkpoint now, beside this one: told earlier, they
        # would wait in the first collective while this one fetched datasets (no timeout to spare).
        # A checkpoint to start from gives its weights (with LoRA: its adapter), not its trainer state
        # (the followers tell the two apart by their spec's resume_from).
        checkpoint = self.spec.resume_from or self.spec.init_from
        self.crew.setup(checkpoint)
        self.parts = build_training_parts(self.spec.model, self.config, resume_from=checkpoint,
                                          topology=self.topology)
        self.crew.strategy = self.parts.sharing.strategy
        if self.topology.several or self.config.distributed != "auto":
            self.report.log(self.parts.sharing.describe(self.topology.world_size))
        if self.spec.resume_from:
            self.state = load_trainer_state(Path(self.spec.resume_from), self.parts.model, self.parts.optimizer,
                                            self.parts.scheduler)
            self.report.log(f"resumed from {self.spec.resume_from} at step {self.state.step}")
        elif self.spec.init_from:
            self.report.log(f"started from the weights of checkpoint {self.config.init_checkpoint} "
                            f"({self.spec.init_from}); optimizer and step start afresh")

    def _load_environment(self) -> None:
        """An environment's code that does not load fails the run here, with its line."""
        from worker.trainer.environments.loading import extra_reward_functions, load_environment, tool_format_for
        from worker.trainer.environments.rendering import ChatRendering

        spec = self.spec.environment
        if spec is None:
            return
        self.tool_format = tool_format_for(self.config.tool_call_format, ChatRendering(self.parts.tokenizer))
        self.environment = load_environment(spec, self.tool_format, self.reward_sandbox)
        self.rewards = self.rewards + extra_reward_functions(self.environment)
        tools = ", ".join(tool.name for tool in self.environment.tools) or "none"
        what = spec.builtin or spec.verifiers_id or spec.kind
        self.report.log(f"environment {spec.name!r} ({what}): tools {tools}, tool calls in the "
                        f"{self.tool_format} format, at most {self.config.max_turns} turns an episode")

    def _report_setup(self, **seconds: float) -> None:
        """Where the time before the first step went, as metrics at the starting step: the
        run page shows them at once, long before the first training step ends."""
        self.report.metrics(self.state.step, {f"setup/{name}": round(value, 3) for name, value in seconds.items()},
                            send_now=True)

    def _fetch_checkpoint_to_resume(self) -> None:
        """A resumed run's checkpoint, downloaded when another worker wrote it (checkpoint_fetch.py)."""
        from worker.trainer.checkpoints.fetch import local_checkpoint

        if not self.spec.resume_from:
            return
        token = self.spec.ingest.token if self.spec.ingest else None
        local, fetched = local_checkpoint(self.spec.resume_from, self.spec.resume_url, token, self.output_dir,
                                          on_wait=self._say_waiting)
        if fetched:
            self.report.log(f"checkpoint to resume from fetched from the control plane into {local}")
        self.spec = self.spec.model_copy(update={"resume_from": local})

    def _fetch_checkpoint_to_start_from(self) -> None:
        """init_checkpoint's folder, downloaded with this run's token (which may fetch that one
        checkpoint of another run and no other), beside the run's own checkpoints. A resume
        starts from the run's own checkpoint instead."""
        from worker.trainer.checkpoints.fetch import local_checkpoint

        if self.spec.resume_from or not self.spec.init_from:
            self.spec = self.spec.model_copy(update={"init_from": None})
            return
        token = self.spec.ingest.token if self.spec.ingest else None
        local, fetched = local_checkpoint(self.spec.init_from, self.spec.init_url, token, self.output_dir,
                                          on_wait=self._say_waiting, folder="start-from")
        if fetched:
            self.report.log(f"checkpoint {self.config.init_checkpoint} to start from fetched from the control "
                            f"plane into {local}")
        self.spec = self.spec.model_copy(update={"init_from": local})

    def _say_waiting(self, message: str) -> None:
        """A fetch waiting for the control plane, in the run's log under the trainer's name."""
        self.report.log(message, level="warning")

    def _load_datasets(self):
        """(training rows, evaluation rows or None). Without an evaluation dataset the evaluation
        holds out a seeded share of the training rows, which training then never sees."""
        from worker.trainer.evaluation.eval_set import split_holdout

        dataset = self._load_dataset(self.spec.dataset)
        if not self.config.evaluates:
            return dataset, None
        if self.spec.eval_dataset is not None:
            return dataset, self._load_dataset(self.spec.eval_dataset)
        kept, held_out = split_holdout(dataset, self.config.eval_holdout_fraction, self.config.seed)
        self.report.log(f"evaluation holds out {len(held_out)} of the dataset's {len(dataset)} rows; "
                        f"training uses the other {len(kept)}")
        return kept, held_out

    def _load_dataset(self, spec):
        """An uploaded dataset's file comes from a shared disk, this worker's cache or the control
        plane (data/fetch.py); the run's log says which."""
        from worker.trainer.data.fetch import dataset_file

        if spec.kind != "file":
            return load_dataset(spec)
        found = dataset_file(spec, self.spec.ingest.token if self.spec.ingest else None, on_wait=self._say_waiting)
        self.report.log(found.describe())
        return load_dataset(spec, found.path)

    def _server_model(self) -> str:
        """What our own vLLM loads: the checkpoint resumed or started from, else the model, resolved
        (a path the operator does not allow is refused: models/paths.py). A LoRA checkpoint holds the
        adapter alone: the server starts from the base model and is given the merged weights (or
        the adapter) before the first rollout."""
        from worker.trainer.models.paths import resolve_model_path

        checkpoint = self.spec.resume_from or self.spec.init_from
        return checkpoint if checkpoint and not self.config.lora else resolve_model_path(self.spec.model)

    def _spawn_server(self) -> None:
        if self.spec.inference_url is None:
            from worker.trainer.inference.server import VLLMServer

            from worker.trainer.inference.launch import new_api_key

            self.own_server = VLLMServer.for_config(
                self._server_model(), self.config,
                log_path=self.output_dir / "logs" / f"vllm-{self.spec.attempt}.log", api_key=new_api_key())
            self.own_server.start()

    def _join_server(self) -> None:
        """Waits for the server (ours or the supervisor's) to answer, then connects to it."""
        if self.own_server is not None:
            server = self.own_server
            server.wait_until_healthy()
            self.report.log(f"vLLM ready {server.seconds_since_start:.1f} s after it started, at {server.url}")
            url, name, key = server.url, server.served_model_name, server.api_key
        else:
            from worker.trainer.inference.readiness import wait_for_health

            url, name, key = self.spec.inference_url, None, self.spec.inference_api_key
            wait_for_health(url, self.config.vllm_startup_timeout_s, should_stop=self.report.cancel_requested.is_set,
                            api_key=key)
        self.server_url, self.server_api_key = url, key
        self.served_name = name or self._served_name(url, key)
        # One hold on the server's generation for the time slicing of a step and the weight
        # sync inside it, so that the server resumes once (weight_sync/server_api.py).
        self.server_admin = VllmAdminClient(url, api_key=key)
        self.server_pause = ServerPause(self.server_admin)
        # A LoRA run whose server is given the adapter sends it alone (weight_sync/lora_adapter.py),
        # whatever the backend; given merged weights, it syncs them as a whole model would.
        serves_adapter = self.config.serves_adapter("cuda" if self.parts.on_gpu else "cpu")
        backend = "lora_adapter" if serves_adapter else self.config.weight_sync_backend
        self.weight_sync = self._weight_sync(backend)
        self.cpu_sharing = sharing_mode(self.config.cpu_sharing, self.parts.on_gpu, len(allowed_cpus()))
        self.generation_pause = GenerationPause(self.server_pause if self.cpu_sharing == "take_turns" else None)

    def _weight_sync(self, backend: str) -> "WeightSync":
        """The NCCL group spans every GPU of every vLLM engine (weight_sync/nccl.py)."""
        return make_weight_sync(backend, self.server_url, self.output_dir, pause=self.server_pause,
                                server_world_size=self.config.inference_gpus,
                                server_engines=self.config.vllm_data_parallel_size, api_key=self.server_api_key)

    @staticmethod
    def _served_name(url: str, api_key: str | None) -> str:
        import httpx

        from worker.trainer.inference.api_key_guard import bearer

        return httpx.get(f"{url}/v1/models", headers=bearer(api_key), timeout=30).json()["data"][0]["id"]

    def _hand_over_cores(self) -> CoreHandover | None:
        """split_cores: the trainer's threads while vLLM generates on its own cores, and all of
        them while it does not (inference/cpu_sharing.py)."""
        if self.cpu_sharing != "split_cores":
            return None
        import torch

        cpus = allowed_cpus()
        kept = generation_cpus(self.config, cpus, self.parts.on_gpu) or []
        threads = torch.get_num_threads()
        beside = max(1, min(threads, len(cpus) - len(kept)))
        self.report.log(f"CPU cores split with vLLM: it generates on core(s) {','.join(map(str, kept))}; the trainer "
                        f"trains on {beside} thread(s) while vLLM has requests and on {threads} while it has none")
        return CoreHandover(self._server_has_work, all_threads=threads, beside_server_threads=beside)

    def _server_has_work(self) -> bool:
        return self.rollout.server_has_work() or (self.evaluator is not None and self.evaluator.running)

    def _start_rollouts(self) -> None:
        order = PromptOrder(len(self.dataset), self.config.seed, position=self.state.data_position)
        self.frontier = ConsumedFrontier(self.state.data_position)
        prompt_column, tokenizer = self.spec.dataset.prompt_column, self.parts.tokenizer

        rendering = self._chat_rendering()

        def next_prompt():
            position = order.position
            row = self.dataset[order.next()]
            columns = reward_columns(row, prompt_column)
            task_prompt = task_prompt_text(row[prompt_column])  # what a judge reads as {prompt}
            if self.environment is None:
                text = render_prompt(row[prompt_column], tokenizer)
            else:  # the episode's first messages travel with the row (environments/episodes.py)
                columns["prompt"] = self.environment.start(dict(row), row[prompt_column])
                text = rendering.text(columns["prompt"], generation_prompt=True)
            ids = tokenizer(text, add_special_tokens=False).input_ids[-self.config.max_prompt_length:]
            return position, text, ids, columns, task_prompt

        if self.spec.resume_from or self.spec.init_from or self.config.lora:
            # The server may hold older weights than the checkpoint (the supervisor's serves the
            # model), and a LoRA run's server has no adapter yet: give it ours before the first rollout.
            self._give_server_our_weights()
        groups_per_step = self.config.completions_per_step // self.config.num_generations
        self.staleness = StalenessPolicy(self.config.max_staleness, groups_per_step, self.config.weight_sync_steps)
        client = CompletionsClient(self.server_url, self.served_name, sampling_params(self.config),
                                   timeout_s=self.config.vllm_request_timeout_s, api_key=self.server_api_key)
        if self.environment is not None:
            client = self._episode_sampler(client, rendering)
        scorer = Scorer(self.rewards, on_error=lambda name, message: self.report.log(
            f"reward {name!r} failed for a group, its rewards are None: {message}", level="warning"))
        in_flight = min(self.config.max_inflight_tasks, self.config.queue_maxsize, self.staleness.useful_ahead)
        judged = any(function.pass_threshold is not None for function in self.rewards)
        self.rollout = RolloutWorker(client, PromptSource(next_prompt), scorer, self.staleness,
                                     self.config.num_generations, self.config.max_inflight_tasks,
                                     self.config.queue_maxsize, current_version=lambda: self.state.model_version,
                                     # One core decodes a wave of sequences faster than a trickle.
                                     wave=self.staleness.half_ahead if self.cpu_sharing == "split_cores" else 1,
                                     scoring_threads=scoring_threads(judged, in_flight))
        self.rollout.start()

    def _chat_rendering(self):
        from worker.trainer.environments.rendering import ChatRendering

        tools = [tool.as_schema() for tool in (self.environment.tools if self.environment else ())]
        return ChatRendering(self.parts.tokenizer, tools if self.tool_format == "hermes" else None)

    def _episode_runner(self, rendering):
        from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner

        return EpisodeRunner(self.environment, rendering, EpisodeLimits.of(self.config), self.tool_format,
                             current_version=lambda: self.state.model_version,
                             on_warning=lambda message: self.report.log(message, level="warning"))

    def _episode_sampler(self, client, rendering):
        from worker.trainer.environments.episodes import EpisodeSampler

        return EpisodeSampler(client, self._episode_runner(rendering))

    def _start_evaluations(self) -> None:
        """The evaluator, and the evaluation of the weights training starts from."""
        from worker.trainer.evaluation.eval_set import eval_examples
        from worker.trainer.evaluation.evaluator import Evaluator

        if self.eval_dataset is None:
            return
        spec = self.spec.eval_dataset or self.spec.dataset
        rendering = self._chat_rendering()
        examples = eval_examples(self.eval_dataset, spec.prompt_column, self.config.eval_examples,
                                 self.parts.tokenizer, self.config.max_prompt_length, self.environment, rendering)
        scorer = Scorer(self.eval_rewards or self.rewards, on_error=lambda name, message: self.report.log(
            f"evaluation reward {name!r} failed, its values are None: {message}", level="warning"))
        self.evaluator = Evaluator(examples, scorer, self.config, self.report, self.server_url,
                                   served_name=lambda: self.served_name,
                                   episodes=self._episode_runner(rendering) if self.environment else None,
                                   api_key=self.server_api_key)
        if self.state.step % self.config.eval_steps == 0:
            self.evaluator.start(self.state.step, self.state.model_version)

    def _maybe_evaluate(self) -> None:
        step = self.state.step
        if self.evaluator is not None and (step % self.config.eval_steps == 0 or step == self.config.max_steps):
            self.evaluator.start(step, self.state.model_version)

    def _give_server_our_weights(self) -> None:
        """The first push. A LoRA run's adapter goes alone where the server loads adapters, and
        rollouts then name it; where the server refuses, it is given merged weights instead."""
        from worker.trainer.weight_sync.interface import WeightSyncError
        from worker.trainer.weight_sync.lora_adapter import ADAPTER_NAME, LoraAdapterSync

        try:
            self.crew.gather_weights()
            self.weight_sync.push(self.parts.served_model(), self.state.model_version)
        except WeightSyncError as exc:
            if not isinstance(self.weight_sync, LoraAdapterSync):
                raise
            self.report.log(f"vLLM did not take the LoRA adapter, so it is given the merged weights at every sync "
                            f"instead: {exc}", level="warning")
            self.weight_sync.close()
            self.weight_sync = self._weight_sync(self.config.weight_sync_backend)
            self.weight_sync.push(self.parts.served_model(), self.state.model_version)
        if isinstance(self.weight_sync, LoraAdapterSync):
            self.served_name = ADAPTER_NAME

    # --- the loop ----------------------------------------------------------------
    def _step_context(self) -> "StepContext":
        return self.parts.training_context(
            self.config, before_micro_batch=self.core_handover.before_micro_batch if self.core_handover else None)

    def _train(self) -> str:
        from worker.trainer.training.step import batch_advantages, train_step

        self.core_handover = self._hand_over_cores()
        ctx = self._step_context()
        last_tokens, last_time = 0, time.perf_counter()
        while self.state.step < self.config.max_steps:
            step_started = time.perf_counter()
            try:
                gathered = self._gather()
            except Cancelled:
                self._save(last=True)
                self.report.status("cancelled", f"cancelled at step {self.state.step}")
                return "cancelled"
            # Staleness as the drop rule saw it: against the policy these groups train, before
            # this step's weight sync moves the version on.
            groups, trained_version = gathered.groups, self.state.model_version
            pipeline = self._async_metrics(gathered)
            advantages = batch_advantages(groups, self.config.num_generations, self.config.scale_rewards)
            if not self.generation_pause.pausing:
                self.rollout.free_taken_slots()  # generation overlaps the step: refill at once
            with self.generation_pause.while_training():  # and the weight sync that follows
                self.crew.train(groups)  # the other processes train their share of the same groups
                metrics = train_step(ctx, groups, advantages)
                self.state.step += 1
                self.state.samples_seen += sum(len(g.completions) for g in groups)
                for group in groups:
                    self.frontier.consume(group.prompt_index)
                metrics.update(self._maybe_sync())
                self._maybe_evaluate()
                # Taking turns: the refill is sampled with the new weights, after the pause.
                self.rollout.free_taken_slots()
            now = time.perf_counter()
            generated = self.rollout.generated_tokens
            metrics.update(rollout_metrics(groups), **pipeline,
                           **{"system/generation_tokens_per_s": (generated - last_tokens) / (now - last_time),
                              "system/step_time_s": now - step_started,
                              "system/model_version": self.state.model_version})
            if self.core_handover is not None:
                metrics["system/train_seconds_beside_generation"] = self.core_handover.step_done()
            last_tokens, last_time = generated, now
            self._maybe_log(metrics, groups)
            self._maybe_send_samples(groups, advantages.values.tolist(), trained_version)
            last = self.state.step == self.config.max_steps
            if last or self.state.step % self.config.save_steps == 0:
                self._save(last=last)
        # A run that says it succeeded has its checkpoints on the control plane (or says which stay
        # on this disk): its final model is there to download, and nothing is lost if this worker
        # goes away once it is done. A cancel does not wait: the supervisor's grace bounds it.
        if self.evaluator is not None:
            self.evaluator.wait()  # the last evaluation is part of the result
        self.checkpoints.close()
        self.report.status("succeeded", f"trained {self.state.step} steps")
        return "succeeded"

    def _gather(self) -> Gathered:
        """One step's groups (rollout/gathering.py); stale ones are counted and their prompts used up."""
        version = self.state.model_version
        syncs = (self.state.step + 1) % self.config.weight_sync_steps == 0
        got = gather(self.rollout, self.staleness, self.staleness.groups_per_step, version,
                     next_version=version + 1 if syncs else version,
                     cancelled=self.report.cancel_requested.is_set)
        self.dropped_stale += len(got.dropped)
        for group in got.dropped:
            self.frontier.consume(group.prompt_index)
        return got

    def _async_metrics(self, gathered: Gathered) -> dict[str, float]:
        staleness = [self.state.model_version - g.model_version for g in gathered.groups]
        return {"async/staleness_mean": sum(staleness) / len(staleness), "async/staleness_max": max(staleness),
                "async/dropped_stale": self.dropped_stale, "async/queue_depth": self.rollout.queue_depth,
                "async/in_flight": self.rollout.in_flight, "async/wait_for_rollouts_s": gathered.waited_s,
                "async/wait_for_expiring_s": gathered.waited_for_expiring_s}

    def _maybe_sync(self) -> dict[str, float]:
        """The sync's seconds as metrics: 0 on a step without one; its parts only with one."""
        if self.state.step % self.config.weight_sync_steps:
            return {"system/weight_sync_s": 0.0}
        # An evaluation answers with the weights it started on: it ends before they change.
        waited = self.evaluator.wait() if self.evaluator is not None else 0.0
        self.state.model_version += 1
        self.crew.gather_weights()
        seconds = self.weight_sync.push(self.parts.served_model(), self.state.model_version)
        self._note_how_the_server_reloads()
        parts = {f"system/weight_sync_{name}_s": part for name, part in self.weight_sync.last_push_parts().items()}
        return {"system/weight_sync_s": seconds, "system/wait_for_evaluation_s": waited, **parts}

    def _note_how_the_server_reloads(self) -> None:
        """Once a run, which way the server took the weights (inference/direct_reload.py):
        what a slow weight sync is read against."""
        note = None if self.reload_noted else self.weight_sync.last_push_note()
        if note:
            self.reload_noted = True
            self.report.log(note)

    def _maybe_log(self, metrics: dict, groups: list | None = None) -> None:
        """`groups`: the step's, whose rewards' own measures are sent with its metrics (None: the metrics alone)."""
        if self.state.step % self.config.logging_steps:
            return
        if groups is not None:
            metrics = {**metrics, **self._reward_metrics(groups)}
        finite = {name: float(v) for name, v in metrics.items() if math.isfinite(v)}
        if len(finite) < len(metrics):
            self.report.log(f"non-finite metrics at step {self.state.step}: "
                            f"{sorted(set(metrics) - set(finite))}", level="warning")
        self.report.metrics(self.state.step, finite)

    def _reward_metrics(self, groups: list) -> dict[str, float]:
        """What the judges and reward models measured of themselves since the last logged step
        (judge/<name>/<key>), and how the judges' pay disagrees with the verifiers' on this step's
        groups (judges/disagreement.py). A judge that timed out or failed is said once, counted."""
        metrics: dict[str, float] = {}
        taken: set[int] = set()  # a judge shared by training and evaluation is measured once
        for function in self.rewards + self.eval_rewards:
            if function.take_metrics is None or id(function.fn) in taken:
                continue
            taken.add(id(function.fn))
            try:
                measured = function.take_metrics()
            except Exception as exc:  # a judge's bookkeeping must never fail a step
                log.exception("taking the metrics of reward %r", function.name)
                self.report.log(f"reward {function.name!r}: its metrics could not be taken: {exc}", level="warning")
                continue
            metrics.update({f"judge/{function.name}/{key}": value for key, value in measured.items()})
            self._say_judge_faults(function.name, measured)
        if groups and any(function.pass_threshold is not None for function in self.rewards):
            from worker.trainer.rewards.judges.disagreement import disagreement_metrics

            metrics.update(disagreement_metrics(groups, self.rewards))
        return metrics

    def _say_judge_faults(self, name: str, measured: dict[str, float]) -> None:
        timeouts, failures = int(measured.get("timeouts", 0)), int(measured.get("failures", 0))
        if not (timeouts or failures):
            return
        calls = int(measured.get("calls", 0))
        self.report.log(f"judge {name!r}: {timeouts} call(s) timed out and {failures} failed of {calls} since the "
                        "last logged step; their completions' rewards are None", level="warning")

    def _maybe_send_samples(self, groups, advantages: list[float], trained_version: int) -> None:
        """The step's kept groups (rollout/sample_keeping.py) to the run page. The step's metrics
        (train_step, rollout_metrics) were computed from all of them before this pick."""
        config = self.config
        kept = kept_groups(self.state.step, len(groups), config.samples_groups_per_step, config.samples_every_steps,
                           config.seed) if config.log_completions else []
        if kept:
            self.report.samples(self.state.step, sample_records(groups, advantages, kept, trained_version))

    def _save(self, last: bool = False) -> None:
        """`last`: the run's last checkpoint, which for LoRA also holds the merged model."""
        self.state.data_position = self.frontier.frontier
        parts = self.parts
        path = save_checkpoint(self.output_dir, self.state, parts.unwrapped_model(), parts.tokenizer,
                               parts.optimizer, parts.scheduler, merged=last,
                               on_folder_ready=lambda: self.crew.save(self.state.step))
        self.checkpoints.keep(path, self.state)


def run_trainer(spec: dict) -> str:
    """Trains per `spec` (a LaunchSpec as a dict); returns succeeded, cancelled or failed. Under
    torchrun, rank 0 trains and leads; the others follow it (distributed/follower.py)."""
    topology = Topology.from_env()
    launch = LaunchSpec.model_validate(spec)
    if topology.several:
        # torchrun starts each process in a session of its own: killing its group (the worker's
        # stop, or the worker dying) would leave the ranks training on, orphaned.
        kill_me_with_parent()
    if not topology.leads:
        from worker.trainer.follower import Follower

        return Follower(launch, topology).run()
    return Trainer(launch, topology).run()
