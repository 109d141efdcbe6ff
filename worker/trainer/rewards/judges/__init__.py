"""Rewards a model gives: LLM judges and reward models (catalog.py says what each is made of).

The trainer builds them from the spec like any reward (rewards/loader.py): each is a callable
with the reward signature, `fn(prompts, completions, **columns)`, wrapped in a
rollout.scoring.RewardFunction whose `take_metrics` reports what it measured of itself. A
judge returns rollout.scoring.Explained values: its raw answers travel with the group to the
completion browser. Judge calls run on the judge's own event loop thread, at most
`limits.max_concurrency` at once for the whole run, so that scoring threads wait on the network,
never on each other, and generation goes on meanwhile (rollout/worker.py scores beside it).
"""
