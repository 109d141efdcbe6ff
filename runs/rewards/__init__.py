"""Reward functions: built-ins, code, judges and reward models as stored and checked, their dry
runs (through the sandbox, or a model queued), their secrets, the API, pages, forms and admin."""
