"""The pieces a trainer in several processes is made of: who does what (topology, strategy),
how the model is shared (sharding; its weights gathered whole: weights/), the leader's orders (crew, order codec)
and how torchrun is started and read (loopback torchrun, launch failure).

Rank 0 leads: it alone owns the rollout worker, the vLLM client, the reporter, the evaluator
and the weight push (app.Trainer). Every other rank follows (worker/trainer/follower.py): it
holds its share of the model and does its part of each collective the leader orders (crew.py).
These modules are what both use; neither program lives here.
"""
