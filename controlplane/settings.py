"""Settings, all read from the environment (see .env.example for every variable)."""
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

from controlplane.env import env_bool, env_choice, env_int, env_list, env_path, env_str, env_url
from controlplane.secret_key import load_or_create_secret_key
from worker.broker import celery_config
from worker.trainer.models.paths import operator_model_dirs

BASE_DIR = Path(__file__).resolve().parent.parent
# A .env beside manage.py applies to every entry point (server, manage.py, tests);
# variables already in the environment win.
if os.environ.get("GRPO_DOTENV", "1") != "0":  # the test suite turns it off to stay hermetic
    load_dotenv(BASE_DIR / ".env", override=False)
DATA_DIR = env_path("DATA_DIR", "var", BASE_DIR)
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or load_or_create_secret_key(DATA_DIR)
SECRETS_ENCRYPTION_KEY = env_str("SECRETS_ENCRYPTION_KEY")  # judges' API keys (runs/rewards/secrets.py)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Where workers and trainers reach the control plane's ingest API.
PUBLIC_URL = env_url("PUBLIC_URL", "http://127.0.0.1:8000", ("http", "https")).rstrip("/")
# Served over https (PUBLIC_URL says so): session and CSRF cookies travel over TLS only, browsers
# are told to use https alone (HSTS) for HSTS_SECONDS, and PUBLIC_URL is a trusted origin for forms.
SERVED_OVER_HTTPS = PUBLIC_URL.startswith("https://")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SERVED_OVER_HTTPS
# A day by default: a browser that saw the header refuses plain http to this host until it expires,
# so a mistake (https dropped, a host name shared with plain services) heals in a day. Raise it to a
# year (31536000) once https is settled; 0 sends no header.
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 86400, minimum=0) if SERVED_OVER_HTTPS else 0
# Behind a proxy that ends TLS, sets X-Forwarded-Proto and drops any a client sent: trust that header
# (otherwise Django sees plain http and sends no HSTS). Off: a client could claim https itself.
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
PUBLIC_ORIGIN = "/".join(PUBLIC_URL.split("/", 3)[:3])  # scheme://host[:port], without a path
if SERVED_OVER_HTTPS and PUBLIC_ORIGIN not in CSRF_TRUSTED_ORIGINS:
    CSRF_TRUSTED_ORIGINS.append(PUBLIC_ORIGIN)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "axes",  # login throttling (LOGIN_FAILURES_LIMIT)
    "runs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: answers a locked-out login (the login page, the admin's) with a 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "controlplane.urls"
ASGI_APPLICATION = "controlplane.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env_url("DATABASE_URL", "", ("postgres", "postgresql", "sqlite"))
# WAL lets the ingest write while pages read; IMMEDIATE transactions and the timeout
# make concurrent writers queue instead of failing with "database is locked".
SQLITE_OPTIONS = {
    "timeout": 20,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
if not DATABASE_URL:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "db.sqlite3",
                             "OPTIONS": SQLITE_OPTIONS}}
elif DATABASE_URL.startswith("sqlite"):
    DATABASES = {"default": {**dj_database_url.parse(DATABASE_URL), "OPTIONS": SQLITE_OPTIONS}}
else:
    # A pool instead of a new PostgreSQL session per request (ASGI runs each request
    # on a fresh thread, and Django's connections are per thread).
    DATABASES = {"default": {**dj_database_url.parse(DATABASE_URL, conn_max_age=0), "OPTIONS": {"pool": True}}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Checked by the admin's user and password forms and `changepassword`, and for ADMIN_PASSWORD
# (runs/management/commands/ensure_admin.py); create_user in code and tests does not check.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": env_int("PASSWORD_MIN_LENGTH", 10, minimum=8)}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Logins are throttled by django-axes: after LOGIN_FAILURES_LIMIT wrong passwords for one username
# from one address, that pair is refused (429, even with the right password) for
# LOGIN_LOCKOUT_MINUTES, counted from the last failure. Other users and addresses are unaffected.
# The address is the connection's (REMOTE_ADDR): behind a proxy that is the proxy's.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out pair before any password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURES_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_DISABLE_ACCESS_LOG = True  # failures are counted; successful logins are not logged to the database
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
# Serve straight from the finders so that `make run` needs no collectstatic.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

MEDIA_ROOT = DATA_DIR / "uploads"
RUNS_DIR = DATA_DIR / "runs"
ARTIFACTS_DIR = DATA_DIR / "artifacts"  # checkpoints uploaded by workers (runs/artifacts/)
# Where uploaded checkpoints are kept once whole: empty for ARTIFACTS_DIR, or s3://bucket/prefix
# for an S3-compatible bucket (credentials the AWS way: AWS_ACCESS_KEY_ID, ..., or an instance role).
# Uploads still arrive in parts under ARTIFACTS_DIR/runs/<id>/uploads/ first.
ARTIFACT_STORE_URL = env_url("ARTIFACT_STORE_URL", "", ("s3",))
ARTIFACT_STORE_ENDPOINT_URL = env_url("ARTIFACT_STORE_ENDPOINT_URL", "", ("http", "https"))  # MinIO, R2, ...
ARTIFACT_STORE_REGION = env_str("ARTIFACT_STORE_REGION", "us-east-1")
# A checkpoint file above this goes into a bucket as a multipart upload, in parts of this size
# (S3's smallest part is 5 MB); a 100 GB optimizer state needs parts of at least 10 MB (10,000 parts).
ARTIFACT_STORE_MULTIPART_BYTES = env_int("ARTIFACT_STORE_MULTIPART_MB", 64, minimum=5) * 1024 * 1024
# One file of a checkpoint in a bucket (download ?file=): 0 streams it through the control plane;
# N > 0 redirects to a URL of the bucket presigned for N seconds, after the same authorisation (the
# client must then reach the bucket's endpoint). Tars made on the fly always stream from here.
ARTIFACT_PRESIGNED_URL_S = env_int("ARTIFACT_PRESIGNED_URL_S", 0, minimum=0)
MODELS_DIR = DATA_DIR / "models"
# Folders whose models a run may name by absolute path (comma-separated; empty: none, a run names
# a hub id or a model prepared under MODELS_DIR). Workers read the same variable themselves
# (worker/trainer/models/paths.py): a user must not train from another run's checkpoint folder.
try:
    MODEL_DIRS = operator_model_dirs()
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None
# The Hugging Face Hub that checkpoints are pushed to (runs/hub/push.py): huggingface.co,
# or a Hub of one's own (an Enterprise deployment, a mirror) at its base URL.
HF_HUB_ENDPOINT = env_url("HF_HUB_ENDPOINT", "https://huggingface.co", ("http", "https")).rstrip("/")
# verifiers environments anyone may use (ids, comma-separated): loading one imports and runs its
# package on the workers, so anyone else needs the code authors' permission (runs/accounts/authoring.py).
VERIFIERS_ENVIRONMENTS_ALLOWED = env_list("VERIFIERS_ENVIRONMENTS_ALLOWED", [])
# Hosts an endpoint judge may call although they resolve to internal addresses (runs/rewards/models/endpoint_hosts.py).
JUDGE_ENDPOINT_HOSTS = env_list("JUDGE_ENDPOINT_HOSTS", [])

# Uploads: above this size a dataset upload is refused with 413 before anything is stored.
DATASET_UPLOAD_MAX_BYTES = env_int("DATASET_UPLOAD_MAX_MB", 200, minimum=1) * 1024 * 1024
# Checking an upload reads every row: a row (a JSONL line, a CSV line) longer than this is refused,
# and a check that takes longer than DATASET_CHECK_TIMEOUT_S stops with an error (runs/datasets/).
DATASET_ROW_MAX_BYTES = env_int("DATASET_ROW_MAX_KB", 1024, minimum=1) * 1024
DATASET_CHECK_TIMEOUT_S = env_int("DATASET_CHECK_TIMEOUT_S", 120, minimum=1)
# A Parquet file's rows, counted as they are decoded, may hold at most this many times the file's
# own size (and always one row of DATASET_ROW_MAX_KB); past it the check stops naming the row.
DATASET_EXPANSION_MAX = env_int("DATASET_EXPANSION_MAX", 32, minimum=1)
# A dry run's built-in reward or environment step runs in a process killed past this (runs/dry_runs/builtin_process.py).
DRY_RUN_TIMEOUT_S = env_int("DRY_RUN_TIMEOUT_S", 5, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 32 * 1024 * 1024  # ingest batches are JSON bodies
FILE_UPLOAD_MAX_MEMORY_SIZE = 4 * 1024 * 1024
# Bodies are refused before a byte of them is read (runs/site/request_guard.py): above
# REQUEST_BODY_MAX_MB, or these routes' own limits. An ingest batch holds up to 5000 events with
# sampled completions (worker/trainer/events.py). A checkpoint comes in chunks of 8 MiB
# (worker/trainer/checkpoints/uploader.py): the chunk limit may not be set below that.
REQUEST_BODY_MAX_BYTES = env_int("REQUEST_BODY_MAX_MB", 4, minimum=1) * 1024 * 1024
INGEST_BATCH_MAX_BYTES = env_int("INGEST_BATCH_MAX_MB", 32, minimum=1) * 1024 * 1024
CHECKPOINT_CHUNK_MAX_BYTES = env_int("CHECKPOINT_CHUNK_MAX_MB", 64, minimum=8) * 1024 * 1024
# All a run's uploaded checkpoints together (this control plane never prunes them): a chunk that
# would pass it is refused with 507 before it is written. A 7B model's full checkpoint with its
# optimizer state is about 100 GB.
RUN_CHECKPOINT_QUOTA_BYTES = env_int("RUN_CHECKPOINT_QUOTA_GB", 500, minimum=1) * 1024 ** 3
# All of one account's uploaded datasets together (MiB; 0: no quota): an upload that would pass it
# is refused with 507 before it is stored (runs/accounts/upload_quota.py).
UPLOAD_QUOTA_PER_ACCOUNT_BYTES = env_int("UPLOAD_QUOTA_PER_ACCOUNT_MB", 0, minimum=0) * 1024 * 1024
# Background work of each kind that one account may have queued or running on the control plane's
# consumer at once (staff too); one more is a 429 naming the setting (runs/background/limits.py).
BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS = env_int(
    "BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS", 1, minimum=1)
BACKGROUND_UNFINISHED_PER_ACCOUNT_ENVIRONMENT_DRY_RUNS = env_int(
    "BACKGROUND_UNFINISHED_PER_ACCOUNT_ENVIRONMENT_DRY_RUNS", 2, minimum=1)
BACKGROUND_UNFINISHED_PER_ACCOUNT_HUB_PUSHES = env_int("BACKGROUND_UNFINISHED_PER_ACCOUNT_HUB_PUSHES", 2, minimum=1)
BACKGROUND_UNFINISHED_PER_ACCOUNT_DATASET_CHECKS = env_int(
    "BACKGROUND_UNFINISHED_PER_ACCOUNT_DATASET_CHECKS", 3, minimum=1)

# An open run socket checks again, before it forwards a message, that its user may still see the run
# (session, active, staff, owner) when its last check is older than this; 0 checks before every message.
# Changes made through the models (logout, a user or run saved or deleted) are acted on at once
# (runs/live/access_watch.py): this bounds only the others (a QuerySet.update, an expired session).
LIVE_ACCESS_RECHECK_S = env_int("LIVE_ACCESS_RECHECK_S", 10, minimum=0)
# A run whose heartbeat is older than this is marked lost.
RUN_HEARTBEAT_TIMEOUT_S = env_int("RUN_HEARTBEAT_TIMEOUT_S", 60, minimum=5)
# A run's token is refused this long after the run succeeded, failed or was cancelled. A trainer
# that failed or was cancelled still uploads its last checkpoints for up to 600 s
# (worker/trainer/checkpoints/keeping.py UPLOAD_WAIT_S), then flushes its last events (30 s).
# A lost run's token stays: its worker may be alive and report again; a resume issues a new one.
RUN_TOKEN_GRACE_S = env_int("RUN_TOKEN_GRACE_S", 660, minimum=0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first so that an anonymous API call gets 401 with a WWW-Authenticate header.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "runs.web.schema.DocumentedErrorsSchema",
    "DEFAULT_PAGINATION_CLASS": "runs.web.pagination.StrictPageNumberPagination",
    # JSON bodies only (a form field cannot say whether `{}` is an object or a string); the
    # dataset upload takes multipart itself. JSON nested past runs.web.json_bodies.JSON_MAX_DEPTH
    # is a 400 there, not a RecursionError (500).
    "DEFAULT_PARSER_CLASSES": ["runs.web.json_bodies.BoundedJSONParser"],
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "runs.web.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GRPO control plane API",
    "DESCRIPTION": "Datasets, reward functions, training configs and runs; event ingest for workers.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get components of their own, without the read-only fields (which are
    # ignored when sent, so an object read can be sent back as it is).
    "COMPONENT_SPLIT_REQUEST": True,
    # Docs assets served from our own static files: no CDN needed.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Choice sets that share a field name with another ("kind") get a name of their own.
    "ENUM_NAME_OVERRIDES": {"AlarmKindEnum": "runs.alarms.serializers.KINDS"},
    # The enum hook is drf-spectacular's default; ours gives a JSON body no file field (runs/web/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "runs.web.schema.json_bodies_take_no_files"],
}

REDIS_URL = env_url("REDIS_URL", "", ("redis", "rediss"))
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", "", ("redis", "rediss", "amqp", "filesystem", "memory"))
CELERY = celery_config(CELERY_BROKER_URL, DATA_DIR)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"],
             "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))},
    # django-axes notes every login at INFO; its failures and lockouts are warnings.
    "loggers": {"axes": {"level": "WARNING"}},
}
