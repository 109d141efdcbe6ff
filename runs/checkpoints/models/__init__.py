"""Checkpoints and their uploads, as stored."""
