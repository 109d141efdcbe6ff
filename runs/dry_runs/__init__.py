"""What a dry run of a reward or an environment shares: its record, its queued job, its answers."""
