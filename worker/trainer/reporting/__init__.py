"""What the trainer exchanges with the control plane over HTTP with the run's token: events and
samples it sends (reporter, outbox, client, session) and files it fetches (fetching)."""
