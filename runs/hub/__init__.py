"""Pushing a checkpoint to the Hugging Face Hub."""
