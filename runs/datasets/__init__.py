"""Datasets: reading and checking a source before anything is stored, the deferred check of a
large upload, how a dataset appears in a launch spec, the API, pages and admin."""
