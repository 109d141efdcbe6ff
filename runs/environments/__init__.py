"""Environments: dry runs of an episode (typed turns or the model), the rubric, the API, pages,
forms and admin."""
