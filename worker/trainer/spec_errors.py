"""A launch spec's validation errors, told without the values given.

pydantic's own message quotes the input (for an error about the whole spec, the whole dict,
its tail being the ingest token); a spec also carries the run's vLLM key and orders secret.
These lines go to the worker's log and the run's, so they name each field and what is wrong
with it, and nothing else.
"""
from pydantic import ValidationError


def describe_spec_errors(exc: ValidationError) -> str:
    return "\n".join(f"  {'.'.join(map(str, error['loc'])) or '(the spec)'}: {error['msg']}"
                     for error in exc.errors(include_url=False, include_input=False, include_context=False))
