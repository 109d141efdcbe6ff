"""The training loop: given the ready parts of start-up, it only trains (training_loop.py),
reporting each step (step_reports.py) and taking the CPU's cores in turn with vLLM where they
split them (cores.py)."""
