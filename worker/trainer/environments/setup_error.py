"""The one error an environment that cannot be used raises at start, whichever kind it is:
a module of its own so that the loaders of each kind and the dispatch between them
(loading.py) all import it without importing each other."""


class EnvironmentSetupError(ValueError):
    """The environment cannot be used as specified; the run fails at start saying why."""
