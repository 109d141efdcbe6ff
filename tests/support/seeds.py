"""Scripts that seed a live control plane's database (AsgiServer.shell_json runs them with
`MODEL` defined first): an owner, a generated dataset, a format reward and a small run."""

SEED_E2E_RUN = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 64, "difficulty": 1, "seed": 0}, row_count=64)
fmt = RewardFunction.objects.create(owner=owner, name="format", kind="builtin", builtin="format",
                                    params={"regex": "(?s) .*"})
config = TrainingConfig(model=MODEL, num_generations=4, per_device_train_batch_size=8, max_steps=3,
                        max_prompt_length=64, max_completion_length=12, learning_rate=5e-3, save_steps=2,
                        max_inflight_tasks=8).model_dump()
run = Run.objects.create(owner=owner, name="e2e", dataset=dataset, config=config)
RunReward.objects.create(run=run, reward_function=fmt, weight=1.0)
print(json.dumps({"run_id": run.pk, "api_token": Token.objects.create(user=owner).key}))
"""
