"""A small Python client and command line (`./grpo`) for the control plane's REST API."""
