"""Server-rendered pages (the dashboard). The REST API is the source of the data; a page
renders what it needs on the server and a small script per page under
frontend/static/js/ makes it live.

One module per area, each with its own URL list, so areas grow without touching
each other: library (datasets, reward functions, configs), watch (runs list, new run,
run page), compare.
"""
