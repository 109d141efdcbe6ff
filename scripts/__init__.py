"""The project's own programs: set-up, the local launcher, the test passes, the docs hooks, the GPU check."""
