"""The environment a run's processes start with: the worker's, less the cluster's secrets.

A run's trainer and vLLM run code the run chose (a model's tokenizer, rewards' imports) as the
worker's own user, and a Ray actor inherits its node's RAY_AUTH_TOKEN. None of them needs the
keys to the cluster, the broker, the database or the bucket, so those never reach them: Ray's
token and address, the broker's and Redis's URLs, the control plane's keys, cloud credentials,
and any variable whose value is a URL carrying a password (proxies excepted: a run needs them
to reach the Hub). What a run does need (paths, caches, thread and device settings, HF_TOKEN)
stays.
"""
import os
import re
from collections.abc import Mapping

CLUSTER_SECRETS = frozenset({
    "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS", "WORKER_RAY_ADDRESS",
    "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "BROKER_URL", "REDIS_URL", "DATABASE_URL",
    "SECRET_KEY", "SECRETS_ENCRYPTION_KEY", "ADMIN_PASSWORD", "GRPO_TOKEN", "GRPO_TOKEN_FILE",
    "ARTIFACT_STORE_URL", "ARTIFACT_STORE_ENDPOINT_URL",
    "SERVICES_DATABASE_URL", "SERVICES_REDIS_URL", "SERVICES_BROKER_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
})
SECRET_PREFIXES = ("AWS_", "AZURE_")  # the bucket's credentials, however the operator gave them
PROXIES = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"})
URL_WITH_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s]*:[^/@\s]*@")


def is_cluster_secret(name: str, value: str) -> bool:
    upper = name.upper()
    if upper in CLUSTER_SECRETS or upper.startswith(SECRET_PREFIXES):
        return True
    return upper not in PROXIES and bool(URL_WITH_PASSWORD.search(value))


def run_environment(extra: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (this process's by default) without the cluster's secrets, with `extra` on top;
    `extra` is the run's own (its API key, its devices) and is not filtered."""
    base = os.environ if environ is None else environ
    kept = {name: value for name, value in base.items() if not is_cluster_secret(name, value)}
    return {**kept, **(extra or {})}
