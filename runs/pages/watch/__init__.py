"""Runs: the list, the new-run form, the live run page and its buttons, the demo runs.

- `runs_list`: /runs/ with status and text filters, picking runs to compare.
- `new_run` (+ `new_run_form`, `choices`): /runs/new/, validated by the API's RunSerializer.
- `run_page`: /runs/<id>/, rendered with what its scripts start from (frontend/static/js/run_*.js).
- `run_alarms`: the run page's alarms panel, its starting data (runs/alarms/).
- `run_actions`: the run page's start, cancel, resume and clone buttons (runs.actions.lifecycle).
- `demo`: the home page's demo runs, one click each (runs.actions.demo, runs/demo_definitions.py).
"""
