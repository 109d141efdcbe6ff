"""Datasets, reward functions and training configs: list, create, edit."""
