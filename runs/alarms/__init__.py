"""A run watching its own signals: alarms raised from the metrics it reports (worker.trainer.config.ALARMS).

- `settings`: the thresholds, patience and stop-on list, read from the run's config;
- `streaks` (pure): when a condition seen at each logged step trips, once while it holds;
- `rules` (pure): the signal alarms (entropy, sampler drift, equal rewards, truncation, a judge
  paying for what a verifier refuses);
- `divergence` (pure): the evaluation falling while the training reward rises;
- `recent`: the bounded window of points the rules read; `raising`: storing an alarm,
  stopping the run when asked to, and telling the page; `watch`: called by each ingest batch;
- `summary`: the latest alarm of each kind per run, for run lists and the API.
"""
