"""`grpo evaluations ...`: a run's evaluations (pass@1, flips), one evaluation's outcomes, and its
examples across evaluations (learned, forgotten, unstable, never moved)."""
import argparse

from client.api import ControlPlane
from client.cli.output import Subparsers, add_json_flag, add_page_flag, number, one_line, print_json, show_json
from client.tables import print_table

OUTCOMES = ("passed", "failed", "flipped")
CLASSES = ("always_passed", "never_passed", "learned", "forgotten", "unstable")


def add_parser(areas: Subparsers) -> None:
    evaluations = areas.add_parser("evaluations", help="a run's evaluations, their outcomes and examples")
    verbs = evaluations.add_subparsers(required=True, metavar="{list,outcomes,examples,example}")
    listing = verbs.add_parser("list", help="one row per evaluation: pass@1, mean score, flips")
    listing.add_argument("run", type=int, help="run id")
    add_json_flag(listing)
    listing.set_defaults(command=list_evaluations)
    outcomes = verbs.add_parser("outcomes", help="the examples of the evaluation at a step, with their answers")
    outcomes.add_argument("run", type=int, help="run id")
    outcomes.add_argument("step", type=int, help="the evaluation's step")
    outcomes.add_argument("--outcome", choices=OUTCOMES, help="only the examples that passed, failed, or flipped "
                                                               "since the evaluation before")
    add_page_flag(outcomes)
    add_json_flag(outcomes)
    outcomes.set_defaults(command=show_outcomes)
    examples = verbs.add_parser("examples", help="every example with its pass rate at each evaluation and its "
                                                 "class")
    examples.add_argument("run", type=int, help="run id")
    examples.add_argument("--classification", choices=CLASSES, help="only the examples of this class")
    add_json_flag(examples)
    examples.set_defaults(command=show_examples)
    example = verbs.add_parser("example", help="one example followed: its answers at every evaluation")
    example.add_argument("run", type=int, help="run id")
    example.add_argument("index", type=int, help="the example's index in the evaluation set")
    add_json_flag(example)
    example.set_defaults(command=show_example)


def list_evaluations(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.evaluations(args.run)
    if args.json:
        return print_json(answer)
    if not answer["evaluations"]:
        print(f"run {args.run} has no evaluations" + ("" if answer["configured"] else " (config eval_steps is 0)"))
        return None
    print_table(("step", "examples", "passing", "pass@1", "mean score", "to pass", "to fail"),
                [(e["step"], e["examples"], e["passing"], f"{e['pass_at_1']:.3f}", number(e["mean_score"]),
                  blank(e["flipped_to_pass"]), blank(e["flipped_to_fail"])) for e in answer["evaluations"]])


def show_outcomes(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.evaluation_outcomes(args.run, args.step, args.outcome, page=args.page)
    if args.json:
        return print_json(answer)
    print_table(("index", "passes", "was", "pass rate", "prompt"),
                [(o["index"], o["passes"], blank(o["previously_passed"]), f"{o['pass_rate']:.2f}",
                  one_line(o["prompt"])) for o in answer["results"]])


def show_examples(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.eval_examples(args.run, args.classification)
    if args.json:
        return print_json(answer)
    print_table(("index", "class", "flips", "pass rates", "prompt"),
                [(e["index"], e["classification"], e["flips"], " ".join(rate(r) for r in e["pass_rates"]),
                  one_line(e["prompt_preview"], 50)) for e in answer["examples"]])


def blank(value: object) -> object:
    """What the first evaluation has no "before" for: blank rather than None."""
    return "" if value is None else value


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def show_example(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.eval_example(args.run, args.index)
    print_json(answer) if args.json else show_json(answer)
