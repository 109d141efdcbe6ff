"""State changes of runs, split by subject: lifecycle (start, cancel, resume, clone) and ingest."""
