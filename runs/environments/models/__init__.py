"""Environments (with their rubric) and their dry runs, as stored."""
