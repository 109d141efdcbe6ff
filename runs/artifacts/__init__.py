"""Where the files runs produce are kept on the control plane (checkpoints uploaded by workers):
the filesystem or an S3-compatible bucket; exports. Bytes only: no tables."""
