"""A run watching its own signals: alarms raised from the metrics it reports (worker.trainer.config.ALARMS)."""
