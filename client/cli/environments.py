"""`grpo environments ...`: environments (a dataset, how an episode goes, the rubric that scores it)
made from a built-in, code or a verifiers id; listed, shown, deleted; and one episode dry-run, with
typed turns (at once) or the model playing (followed until done)."""
import argparse
from pathlib import Path

from client.api import ControlPlane
from client.resources.environments import rubric as rubric_of
from client.cli.inputs import pairs, read_json_object, read_text, weights
from client.cli.jobs import follow_dry_run
from client.cli.output import Subparsers, add_json_flag, add_list_verb, add_show_verb, one_line, print_json, show_json
from client.session import Json
from client.tables import print_table

KINDS = ("builtin", "code", "verifiers")


def add_parser(areas: Subparsers) -> None:
    environments = areas.add_parser("environments", help="list, show, create, delete environments; dry-run an "
                                                         "episode")
    verbs = environments.add_subparsers(required=True, metavar="{list,show,create,update,delete,dry-run}")
    add_list_verb(verbs, "your environments", list_environments)
    add_show_verb(verbs, "environment", "one environment with its params and rubric", show_environment)
    add_create_parser(verbs)
    update = verbs.add_parser("update", help="rename an environment, set params, or replace its rubric")
    update.add_argument("environment", type=int, help="environment id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--description", help="a new description")
    update.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a param, on top of the environment's (repeat)")
    update.add_argument("--reward", action="append", default=[], metavar="ID[:WEIGHT]",
                        help="the new rubric: a reward function with its weight (repeat)")
    add_json_flag(update)
    update.set_defaults(command=update_environment)
    delete = verbs.add_parser("delete", help="delete an environment no run uses")
    delete.add_argument("environment", type=int, help="environment id")
    delete.set_defaults(command=delete_environment)
    add_dry_run_parser(verbs)


def add_create_parser(verbs: Subparsers) -> None:
    create = verbs.add_parser("create", help="a built-in, code or verifiers environment")
    create.add_argument("--name", required=True, help="a name of yours no other environment has")
    create.add_argument("--kind", required=True, choices=KINDS, help="how an episode proceeds")
    create.add_argument("--description", default="", help="what it is, for people")
    create.add_argument("--dataset", type=int, help="builtin, code: the dataset whose rows start the episodes")
    create.add_argument("--reward", action="append", default=[], metavar="ID[:WEIGHT]",
                        help="builtin, code: a reward function of the rubric, with its weight (repeat)")
    create.add_argument("--builtin", default="", help="kind builtin: its name (calculator, feedback)")
    create.add_argument("--source-file", type=Path, help="kind code: the Python file defining step(messages, row)")
    create.add_argument("--verifiers-id", default="", help="kind verifiers: the environment's id")
    create.add_argument("--params-file", type=Path, help="builtin, verifiers: a JSON object of params")
    create.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a param, on top of --params-file (repeat)")
    add_json_flag(create)
    create.set_defaults(command=create_environment)


def add_dry_run_parser(verbs: Subparsers) -> None:
    dry_run = verbs.add_parser("dry-run", help="play one episode on a dataset row: typed turns (--turn), or the "
                                               "model (followed until done)")
    dry_run.add_argument("environment", type=int, help="environment id")
    dry_run.add_argument("--row", type=int, default=0, help="which row opens the episode (0: the first)")
    dry_run.add_argument("--dataset", type=int, help="the dataset of the row (default: the environment's)")
    dry_run.add_argument("--turn", action="append", default=[], metavar="TEXT",
                         help="the assistant's next turn, as the model would write it (repeat); none: the model "
                              "plays")
    dry_run.add_argument("--model", help="without --turn: the model that plays (one prepared on the control plane)")
    dry_run.add_argument("--max-turns", type=int, help="assistant turns before the episode is stopped")
    add_json_flag(dry_run)
    dry_run.set_defaults(command=dry_run_environment)


def list_environments(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.environments(args.page)
    if args.json:
        return print_json(answer)
    print_table(("id", "name", "kind", "what", "dataset", "rubric"),
                [(e["id"], e["name"], e["kind"], e["builtin"] or e["verifiers_id"], e["dataset"] or "",
                  rubric(e)) for e in answer["results"]])


def rubric(environment: Json) -> str:
    return ", ".join(f"{r['name']} ×{r['weight']:g}" for r in environment["rubric"])


def show_environment(api: ControlPlane, args: argparse.Namespace) -> None:
    environment = api.environment(args.environment)
    if args.json:
        return print_json(environment)
    print(f"environment {environment['id']} {environment['name']!r}: {environment['kind']} "
          f"{environment['builtin'] or environment['verifiers_id']}".rstrip())
    print(f"dataset {environment['dataset']}; rubric {rubric(environment) or 'its own'}")
    if environment["kind"] == "code":
        print(environment["source"])
    else:
        show_json(environment["params"])


def create_environment(api: ControlPlane, args: argparse.Namespace) -> None:
    start = read_json_object(args.params_file, "--params-file") if args.params_file else {}
    source = read_text(args.source_file, "--source-file") if args.source_file else ""
    environment = api.create_environment(
        args.name, args.kind, dataset=args.dataset, rewards=weights(args.reward, "--reward"), builtin=args.builtin,
        params=pairs(args.set, "--set", start), source=source, verifiers_id=args.verifiers_id,
        description=args.description)
    if args.json:
        return print_json(environment)
    print(f"environment {environment['id']} {environment['name']!r} created: {environment['kind']}")


def update_environment(api: ControlPlane, args: argparse.Namespace) -> None:
    fields = {"name": args.name, "description": args.description}
    changed = {name: value for name, value in fields.items() if value is not None}
    if args.set:  # on top of its params: params sent alone replace them
        changed["params"] = pairs(args.set, "--set", api.environment(args.environment)["params"])
    if args.reward:
        changed["rubric"] = rubric_of(weights(args.reward, "--reward"))
    environment = api.update_environment(args.environment, **changed)
    if args.json:
        return print_json(environment)
    print(f"environment {environment['id']} {environment['name']!r} updated")


def delete_environment(api: ControlPlane, args: argparse.Namespace) -> None:
    api.delete_environment(args.environment)
    print(f"environment {args.environment} deleted")


def dry_run_environment(api: ControlPlane, args: argparse.Namespace) -> None:
    asked = {"row": args.row, "dataset": args.dataset, "turns": args.turn or None, "model": args.model,
             "max_turns": args.max_turns}
    answer = api.dry_run_environment(args.environment,
                                     **{name: value for name, value in asked.items() if value is not None})
    if "state" in answer:  # the model plays: queued for the control plane's consumer
        answer = follow_dry_run(lambda: api.environment_dry_run(args.environment, answer["id"]))
    if args.json:
        return print_json(answer)
    for turn in answer.get("turns", []):
        print(f"{turn.get('role', '?')}: {one_line(turn.get('content', ''), 100)}")
    print(f"ended: {answer.get('end_reason', '?')}; reward {answer.get('reward')}")
