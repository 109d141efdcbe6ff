"""`./grpo`, the command line: `main.py` parses and runs a command, one module per area
(`runs.py`, `datasets.py`, ...) adds its verbs, and `inputs.py`, `output.py` and `jobs.py` are
what the areas share (files and flags read, answers printed, background work followed)."""
