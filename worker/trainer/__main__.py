"""`python -m worker.trainer --spec spec.json`: train one run; exit 0 on success or cancel, 1 on failure."""
import argparse
import json
import logging
import sys
from pathlib import Path

from pydantic import ValidationError

from worker.trainer.processes.output_lines import LOG_FORMAT


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.trainer", description=__doc__)
    parser.add_argument("--spec", required=True, type=Path, help="launch spec JSON (worker.trainer.spec.LaunchSpec)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    for chatty in ("httpx", "httpcore"):  # a line per request to vLLM and the control plane
        logging.getLogger(chatty).setLevel(logging.WARNING)
    try:
        spec = json.loads(args.spec.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read the spec {args.spec}: {exc}", file=sys.stderr)
        return 2
    from worker.trainer.app import run_trainer

    try:
        outcome = run_trainer(spec)
    except ValidationError as exc:  # told without the values: the spec holds the run's secrets
        from worker.trainer.spec_errors import describe_spec_errors

        print(f"invalid spec {args.spec}:\n{describe_spec_errors(exc)}", file=sys.stderr)
        return 2
    return 0 if outcome in ("succeeded", "cancelled") else 1


if __name__ == "__main__":
    from worker.trainer.processes.allocator import reexec_with_chosen_allocator
    reexec_with_chosen_allocator()  # before torch is imported (see allocator.py)
    sys.exit(main())
