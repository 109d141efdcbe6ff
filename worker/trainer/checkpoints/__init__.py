"""The worker's side of checkpoints: saving and loading one (saving), which to keep on disk
(keeping), where a run's live in its folder (run_folder), the list of files a checkpoint is
(manifest, shared with the control plane), sending them to the control plane (uploader) and
fetching one to resume or start from (fetch)."""
