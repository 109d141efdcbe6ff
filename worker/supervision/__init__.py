"""One run's supervision on a worker, a module per concern, which worker/supervisor.py runs in order:
what this machine refuses before it starts anything, the GPU split, the vLLM server(s), the
trainer, the watch over both, the words for how the run ended, and the trainer's leftovers."""
