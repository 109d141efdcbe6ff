"""Measurements that print a table; run each from the project root as `python -m bench.<name>`."""
