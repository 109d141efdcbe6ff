"""Everything a run needs before its first step, built in order and handed over as ready parts.

sequence.py runs the phases in the order that overlaps the slow ones (vLLM loads in its own
process while this one loads the policy) and returns one ReadyParts (ready.py); each phase is a
module by concern. Every part that starts is registered with the run's Lifecycle as it starts,
so a start-up failing half-way stops what it started.
"""
