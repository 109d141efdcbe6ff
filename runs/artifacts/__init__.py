"""Where the files runs produce are kept on the control plane (checkpoints uploaded by workers)."""
