"""The door for what workers report: a batch of events stored all at once, or not at all."""
