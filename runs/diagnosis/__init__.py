"""Where a run's step time goes, what holds it back, and which knob moves it.

engine.py reads a run's step metrics (pure: no Django, so bench/ and tests call it on plain
series); reading.py fetches those series from the database for the API.
"""
