"""The domains composed into one site: URL lists, the request guard, the home page."""
