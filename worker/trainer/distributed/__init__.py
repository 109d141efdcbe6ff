"""The trainer in several processes: who does what, how the model is shared, what travels between them.

Rank 0 leads: it alone owns the rollout worker, the vLLM client, the reporter, the evaluator
and the weight push (app.Trainer). Every other rank follows (follower.py): it holds its share
of the model and does its part of each collective the leader orders (crew.py): a training
step, an FSDP2 weight gather, a checkpoint. Which process does what is decided here and in
app.run_trainer, which hands rank 0 to the Trainer and the others to a Follower.
"""
