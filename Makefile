# The two commands: `make run` starts the control plane on this machine, `make test` checks it.
#
# Settings come from the environment or from a .env file (see .env.example).
# Variables given on the command line reach the scripts too: `make run PORT=9000`,
# `make worker QUEUES=gpu-a100`, `make test-fast ARGS="-k ingest"`.

PYTHON ?= python3
VENV_PYTHON := .venv/bin/python

.DEFAULT_GOAL := help
.PHONY: help run worker test test-fast test-learning deps dev-deps trainer-stack browser

help:
	@echo "make run        set up .venv, migrate, create the first admin, start the server and a worker"
	@echo "make test       the whole suite on the embedded defaults, then again on PostgreSQL and Redis"
	@echo "make test-fast  the embedded pass only, without tests marked slow"
	@echo "make test-learning  the runs that must learn something measurable (10 minutes each)"
	@echo "make worker     only a Celery worker (QUEUES=a,b; CELERY_BROKER_URL for another machine)"

run: deps trainer-stack
	$(VENV_PYTHON) -m scripts.run_local

worker: deps trainer-stack
	$(VENV_PYTHON) -m scripts.run_local --worker-only

test: dev-deps trainer-stack browser
	$(VENV_PYTHON) scripts/run_tests.py $(ARGS)

test-fast: dev-deps trainer-stack browser
	$(VENV_PYTHON) scripts/run_tests.py --fast $(ARGS)

test-learning: dev-deps trainer-stack
	$(VENV_PYTHON) -m pytest -m learning $(ARGS)

# Both create .venv when missing and reinstall only when a requirements file changed.
deps:
	@$(PYTHON) scripts/ensure_venv.py requirements.txt

dev-deps:
	@$(PYTHON) scripts/ensure_venv.py requirements-dev.txt

# The trainer's own stack (the CPU or GPU build of torch and vLLM, picked for this machine)
# and the default model, converted once under DATA_DIR. Both are quick when already done.
trainer-stack: deps
	@$(VENV_PYTHON) scripts/install_trainer_stack.py
	@$(VENV_PYTHON) -m worker.trainer.models.prepare

# Debian's chromium for the browser tests (Playwright drives it; it never downloads one).
browser:
	@$(PYTHON) scripts/ensure_browser.py
