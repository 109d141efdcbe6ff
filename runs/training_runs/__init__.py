"""A run: its record and lifecycle, its launch spec, the runs API and the run pages."""
