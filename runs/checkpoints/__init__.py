"""Checkpoints: uploaded by workers, finished in the background, downloaded, started from."""
