"""LoRA on the policy: only the adapter trains, the reference is the base with the adapter off,
vLLM gets the merged weights under the base's names, checkpoints hold the adapter alone."""
import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

from worker.trainer.training import lora  # noqa: E402
from worker.trainer.training.batching import Row, micro_batches  # noqa: E402
from worker.trainer.checkpoints.saving import MERGED_DIR, TrainerState, save_checkpoint  # noqa: E402
from worker.trainer.config import TrainingConfig, errors_by_field  # noqa: E402
from worker.trainer.models.families import FAMILY_LOGITS  # noqa: E402
from worker.trainer.models.tiny import tiny_family_config  # noqa: E402
from worker.trainer.training.policy import completion_logprobs  # noqa: E402
from worker.trainer.rollout.groups import Completion, Group  # noqa: E402
from worker.trainer.training.setup import build_training_parts  # noqa: E402
from worker.trainer.training.step import StepContext, batch_advantages, loss_settings_of, train_step  # noqa: E402

VOCAB = 64
ROWS = [Row([5, 6, 7], [21, 22, 23], [-2.0] * 3, 1.0, group=0), Row([5, 6, 7], [24, 25], [-2.0] * 2, -1.0, group=0)]


def tiny_base(model_type: str = "llama"):
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(tiny_family_config(model_type, VOCAB), dtype=torch.float32)


@pytest.fixture
def base_dir(tiny_model_dir):
    """A tiny Llama model folder with SmolLM2's tokenizer (tests/worker/conftest.py)."""
    return str(tiny_model_dir)


def config_for(**knobs) -> TrainingConfig:
    return TrainingConfig(lora=True, lora_r=4, lora_alpha=8.0, learning_rate=0.05, max_steps=5, num_generations=2,
                          per_device_train_batch_size=2, bf16="off", **knobs)


def with_moved_adapter(model):
    """The adapter's B matrices start at zero (the adapter adds nothing): move them."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)
    return model


def logprobs(model, temperature: float = 1.0):
    batch = micro_batches(ROWS, size=2, pad_id=0, share_prompts=False)[0]
    with torch.no_grad():
        return completion_logprobs(model, batch, temperature)[0]


def test_only_the_adapter_is_trainable():
    model = lora.attach_adapter(tiny_base(), config_for())
    trainable = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
    assert trainable and all(".lora_A." in name or ".lora_B." in name for name in trainable)
    assert {name.split(".")[-4] for name in trainable} == set(lora.DEFAULT_TARGETS)


@pytest.mark.parametrize("model_type", sorted(FAMILY_LOGITS))
def test_every_family_takes_its_default_targets(model_type):
    model = lora.attach_adapter(tiny_base(model_type), config_for())
    assert any(parameter.requires_grad for parameter in model.parameters())


def test_the_reference_is_the_base_model_with_the_adapter_off():
    base = tiny_base()
    expected = logprobs(base)
    model = with_moved_adapter(lora.attach_adapter(copy.deepcopy(base), config_for()))
    assert not torch.allclose(logprobs(model), expected, atol=1e-3)
    with lora.reference_forward(model):
        assert torch.allclose(logprobs(model), expected, atol=1e-6)
    assert not torch.allclose(logprobs(model), expected, atol=1e-3)  # the adapter is back on after


def test_merged_weights_compute_what_the_adapted_model_computes_under_the_bases_names():
    base = tiny_base()
    model = with_moved_adapter(lora.attach_adapter(copy.deepcopy(base), config_for()))
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    merged = lora.merged_state_dict(model)
    assert set(merged) == set(base.state_dict())
    served = copy.deepcopy(base)
    served.load_state_dict(merged)
    assert torch.allclose(logprobs(served), logprobs(model), atol=1e-5)
    assert all(torch.equal(before[name], tensor) for name, tensor in model.state_dict().items())
    assert isinstance(lora.served_weights(model), lora.ServedLora) and lora.served_weights(base) is base


def test_a_training_step_moves_the_adapter_and_leaves_the_base_alone(base_dir):
    parts = build_training_parts(base_dir, config_for(beta=0.1))
    assert parts.ref_model is parts.model  # no second copy of the model
    frozen = {name: p.clone() for name, p in parts.model.named_parameters() if not p.requires_grad}
    adapter = {name: p.clone() for name, p in parts.model.named_parameters() if p.requires_grad}
    config = config_for(beta=0.1)
    ctx = StepContext(model=parts.model, optimizer=parts.optimizer, scheduler=parts.scheduler,
                      accelerator=parts.accelerator, ref_model=parts.ref_model, loss_settings=loss_settings_of(config),
                      num_generations=2, scale_rewards="group", micro_batch_size=2, max_grad_norm=1.0,
                      temperature=1.0, pad_id=0)
    completions = [Completion([21, 22], [-2.0] * 2, "a", "stop"), Completion([24, 25, 26], [-2.0] * 3, "b", "stop")]
    groups = [Group(0, "p", [5, 6, 7], {}, completions, model_version=0, totals=[1.0, 0.0])]
    metrics = train_step(ctx, groups, batch_advantages(groups, 2, "group"))
    assert metrics["train/loss"] == metrics["train/loss"]  # finite, not NaN
    assert all(torch.equal(p, frozen[name]) for name, p in parts.model.named_parameters() if name in frozen)
    assert any(not torch.equal(p, adapter[name]) for name, p in parts.model.named_parameters() if name in adapter)


def test_a_checkpoint_holds_the_adapter_and_resumes_to_the_same_model(base_dir, tmp_path):
    parts = build_training_parts(base_dir, config_for())
    with_moved_adapter(parts.model)
    path = save_checkpoint(tmp_path / "out", TrainerState(step=1, model_version=1, data_position=0),
                           parts.unwrapped_model(), None, parts.optimizer, parts.scheduler)
    saved = {file.name for file in path.iterdir()}
    assert "adapter_model.safetensors" in saved and "model.safetensors" not in saved
    resumed = build_training_parts(base_dir, config_for(), resume_from=str(path))
    assert torch.allclose(logprobs(resumed.model), logprobs(parts.model), atol=1e-6)
    assert any(p.requires_grad for p in resumed.model.parameters())  # it goes on training


def test_a_runs_last_checkpoint_also_holds_the_merged_model_ready_to_serve(base_dir, tmp_path):
    parts = build_training_parts(base_dir, config_for())
    with_moved_adapter(parts.model)
    state = TrainerState(step=5, model_version=5, data_position=0)
    kept = save_checkpoint(tmp_path / "out", state, parts.unwrapped_model(), parts.tokenizer, parts.optimizer,
                           parts.scheduler)
    assert not (kept / MERGED_DIR).exists()  # only the last one: a merged model is the base's size
    last = save_checkpoint(tmp_path / "out", state, parts.unwrapped_model(), parts.tokenizer, parts.optimizer,
                           parts.scheduler, merged=True)
    merged_dir = last / MERGED_DIR
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {file.name for file in merged_dir.iterdir()}
    served = transformers.AutoModelForCausalLM.from_pretrained(merged_dir, dtype=torch.float32)
    assert torch.allclose(logprobs(served), logprobs(parts.model), atol=1e-5)


def test_settings_that_do_not_fit_the_model_name_the_knob_and_what_would():
    base = tiny_base()
    missing = lora.settings_problem(base, ["q_proj", "qkv"], rank=4)
    assert missing.field == "lora_target_modules" and "qkv" in str(missing) and "down_proj, gate_proj" in str(missing)
    too_wide = lora.settings_problem(base, ["q_proj"], rank=33)
    assert too_wide.field == "lora_r" and "at most 32" in str(too_wide)
    assert lora.settings_problem(base, ["q_proj"], rank=32) is None


def test_a_config_is_checked_against_a_local_model(base_dir):
    from worker.trainer.machine_checks import problems_here

    ((field, message),) = problems_here(TrainingConfig(model=base_dir, lora=True, lora_target_modules="q_proj,attn"))
    assert field == "lora_target_modules" and "no linear layer named attn" in message
    ((field, message),) = problems_here(TrainingConfig(model=base_dir, lora=True, lora_r=200))
    assert field == "lora_r" and "lora_r (200) is larger" in message
    with pytest.raises(ValueError) as refused:
        TrainingConfig(lora_target_modules="q_proj;v_proj")
    assert "'q_proj;v_proj'" in errors_by_field(refused.value)["lora_target_modules"][0]
    assert TrainingConfig(model=base_dir, lora=True, lora_r=8, lora_target_modules=" q_proj, v_proj,").lora_targets \
        == ["q_proj", "v_proj"]


class RecordingSync:
    def __init__(self):
        self.pushed = []

    def push(self, model, version):
        self.pushed.append((model, version))
        return 0.0

    def close(self):
        pass


def test_a_server_that_refuses_the_adapter_is_given_merged_weights_and_the_log_says_why(tmp_path, monkeypatch):
    import httpx

    from tests.support.trainers import events_session, logged_lines, spec_for, starting_run
    from worker.trainer.startup import weights
    from worker.trainer.startup.server import ServerConnection
    from worker.trainer.weight_sync.lora_adapter import LoraAdapterSync
    from worker.trainer.inference.server_api import ServerPause, VllmAdminClient

    refusing = httpx.MockTransport(lambda request: httpx.Response(404, text='{"detail":"Not Found"}'))
    run = starting_run(spec_for(tmp_path, config_for()), events_session(tmp_path).start())
    server = ServerConnection("http://vllm", "policy", None,
                              ServerPause(VllmAdminClient("http://vllm", transport=refusing)))
    adapter_sync = run.lifecycle.started(LoraAdapterSync("http://vllm", tmp_path, pause=server.pause), lambda: None)
    training = type("Parts", (), {"served_model": lambda self: lora.ServedLora(
        lora.attach_adapter(tiny_base(), config_for()))})()
    fallback = RecordingSync()
    monkeypatch.setattr(weights, "make_weight_sync", lambda backend, *args, **kwargs: fallback)
    sync, served_name = weights.give_server_our_weights(run, server, adapter_sync, run.crew, training,
                                                        TrainerState(step=0, model_version=0, data_position=0))
    run.report.close()
    assert len(fallback.pushed) == 1 and sync is fallback
    assert run.lifecycle.running == [fallback]  # stopped in the refused sync's place when the run ends
    assert served_name == "policy"  # rollouts keep naming the base model
    assert any("did not take the LoRA adapter" in line and "HTTP 404" in line for line in logged_lines(tmp_path))
