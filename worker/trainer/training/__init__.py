"""One training step and what it is built from: the parts (setup), the policy's forward and
log-probs (policy), packed micro-batches (batching), precision, LoRA, and a probe that runs the
step at any scale (probe)."""
