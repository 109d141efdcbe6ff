"""The generated parts of the docs/ site: the settings, CLI and API references.

Each comes from the one place the facts live (`.env.example`, `client.cli.main.parser()`, the
OpenAPI schema), so nothing is written twice. `hooks.py` puts them into the pages at build time.
"""
