"""The admin: each domain registers its own pages (its admin.py); Django imports this module."""
from runs.alarms import admin as alarms_admin
from runs.checkpoints import admin as checkpoints_admin
from runs.configs import admin as configs_admin
from runs.datasets import admin as datasets_admin
from runs.environments import admin as environments_admin
from runs.evaluation import admin as evaluation_admin
from runs.rewards import admin as rewards_admin
from runs.telemetry import admin as telemetry_admin
from runs.training_runs import admin as training_runs_admin

REGISTERED_BY = (alarms_admin, checkpoints_admin, configs_admin, datasets_admin, environments_admin,
                 evaluation_admin, rewards_admin, telemetry_admin, training_runs_admin)
