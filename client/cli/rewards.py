"""`grpo rewards list|show|create|delete`: reward functions from a shell, judges and reward models included.

A judge's parameters come from flags (--template, --model, --mode, --base-url, --label) or a
JSON file (--params-file), with --set KEY=VALUE on top (dotted keys reach nested ones:
--set limits.max_concurrency=4). An endpoint judge's API key is read from the file
--api-key-file names, or from GRPO_JUDGE_API_KEY; never from a flag's value, which the shell's
history and `ps` would keep. The server stores it encrypted and never answers it again.
"""
import argparse
import json
import os
from pathlib import Path

from client.cli.inputs import InputRefused, read_json_object, read_secret, read_text, set_dotted
from client.cli.jobs import follow_dry_run
from client.cli.output import Subparsers, add_json_flag, add_list_verb, add_show_verb, print_json
from client.api import ControlPlane
from client.tables import print_table

KEY_ENV = "GRPO_JUDGE_API_KEY"
KEY_FLAG_REFUSAL = ("--api-key is not taken: a key on the command line shows in `ps` and the shell's history. "
                    f"Put it alone in a file and pass --api-key-file PATH, or set {KEY_ENV}")
KINDS = ("builtin", "code", "judge", "reward_model")


def names_key_flag(argv: list[str]) -> bool:
    """`--api-key VALUE` would otherwise reach argparse, whose usage error echoes it (or takes it as
    the abbreviation of --api-key-file and prints it as a missing file's name)."""
    return any(arg == "--api-key" or arg.startswith("--api-key=") for arg in argv)


def add_parser(areas: Subparsers) -> None:
    rewards = areas.add_parser("rewards", help="list, show, create, update, delete, dry-run reward functions "
                                               "(judges included)")
    verbs = rewards.add_subparsers(required=True, metavar="{list,show,create,update,delete,dry-run}")
    add_list_verb(verbs, "your reward functions", list_rewards)
    add_show_verb(verbs, "reward", "one reward function, its params in full", show_reward)
    update = verbs.add_parser("update", allow_abbrev=False, help="rename, set params, replace or clear the API key")
    update.add_argument("reward", type=int, help="reward function id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--description", help="a new description")
    update.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a param, on top of the reward's (repeat; dotted keys for nested ones)")
    key = update.add_mutually_exclusive_group()
    key.add_argument("--api-key-file", type=Path, help="an endpoint judge: a file holding its new API key")
    key.add_argument("--clear-api-key", action="store_true", help="an endpoint judge: forget its stored API key")
    add_json_flag(update)
    update.set_defaults(command=update_reward)
    delete = verbs.add_parser("delete", help="delete a reward function no run uses")
    delete.add_argument("reward", type=int, help="reward function id")
    delete.set_defaults(command=delete_reward)
    add_create_parser(verbs)
    add_dry_run_parser(verbs)


def add_create_parser(verbs: Subparsers) -> None:
    create = verbs.add_parser("create", allow_abbrev=False, help="a built-in, code, a judge or a reward model",
                              description=__doc__)
    create.add_argument("--name", required=True, help="a name of yours no other reward function has")
    create.add_argument("--kind", required=True, choices=KINDS, help="what scores: a built-in, Python code, "
                                                                     "a judge model or a reward model")
    create.add_argument("--description", default="", help="what it rewards, for people")
    create.add_argument("--builtin", default="", help="kind builtin: its name (accuracy, length...)")
    create.add_argument("--source-file", type=Path, help="kind code: the Python file defining reward()")
    create.add_argument("--params-file", type=Path, help="a JSON object of params; flags below go on top")
    create.add_argument("--template", help="judge: what it is asked, with {prompt}, {completion} and columns")
    create.add_argument("--template-file", type=Path, help="judge: the template read from a file")
    create.add_argument("--model", help="judge, reward_model: the model (a served model's name, or the name "
                                        "an endpoint knows)")
    create.add_argument("--mode", choices=("score", "choice", "rank"), help="judge: how its answer is read")
    create.add_argument("--base-url", help="judge: an OpenAI-compatible endpoint (sets endpoint url)")
    create.add_argument("--label", action="append", default=[], metavar="LABEL=VALUE",
                        help="judge, mode choice: an answer and its reward (repeat)")
    create.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="any param (repeat; dotted keys for nested ones)")
    create.add_argument("--api-key-file", type=Path,
                        help=f"judge with --base-url: a file holding the endpoint's API key (else ${KEY_ENV})")
    add_json_flag(create)
    create.set_defaults(command=create_reward)


def add_dry_run_parser(verbs: Subparsers) -> None:
    dry_run = verbs.add_parser("dry-run", help="score typed completions for a dataset's first rows, or a run's "
                                               "samples at a step (a judge or reward model: followed until done)")
    dry_run.add_argument("reward", type=int, help="reward function id")
    dry_run.add_argument("--dataset", type=int, help="dataset whose first rows the completions answer")
    dry_run.add_argument("--completion", action="append", default=[], metavar="TEXT",
                         help="a completion for the next row (repeat: one per row)")
    dry_run.add_argument("--run", type=int, help="score this run's samples instead (with --step)")
    dry_run.add_argument("--step", type=int, help="with --run: the step whose samples are scored")
    dry_run.add_argument("--rows", type=int, help="how many rows (default: one per --completion)")
    add_json_flag(dry_run)
    dry_run.set_defaults(command=dry_run_reward)


def list_rewards(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.rewards(args.page)
    if args.json:
        return print_json(answer)
    print_table(("id", "name", "kind", "what", "api key"),
                [(r["id"], r["name"], r["kind"], what(r), "set" if r.get("api_key_set") else "")
                 for r in answer["results"]])


def show_reward(api: ControlPlane, args: argparse.Namespace) -> None:
    reward = api.reward(args.reward)
    if args.json:
        return print_json(reward)
    print(f"reward {reward['id']} {reward['name']!r}: {reward['kind']} {what(reward)}".rstrip())
    if reward["description"]:
        print(reward["description"])
    if reward["kind"] == "judge":
        print(f"api key: {'set' if reward['api_key_set'] else 'not set'}")
    if reward["kind"] == "code":
        print(reward["source"])
    else:
        print(json.dumps(reward["params"], indent=2))


def create_reward(api: ControlPlane, args: argparse.Namespace) -> None:
    params, source = reward_params(args), read_text(args.source_file, "--source-file") if args.source_file else ""
    key = api_key(args, params)
    reward = api.create_reward(args.name, args.kind, params, builtin=args.builtin, source=source,
                               description=args.description, api_key=key)
    if args.json:
        return print_json(reward)
    key_note = " (API key stored)" if reward.get("api_key_set") else ""
    print(f"reward {reward['id']} {reward['name']!r} created: {reward['kind']} {what(reward)}".rstrip() + key_note)


def update_reward(api: ControlPlane, args: argparse.Namespace) -> None:
    fields = {"name": args.name, "description": args.description}
    changed = {name: value for name, value in fields.items() if value is not None}
    if args.set:  # on top of its params: params sent alone replace them
        changed["params"] = params = api.reward(args.reward)["params"]
        for pair in args.set:
            set_dotted(params, pair)
    if args.api_key_file or args.clear_api_key:
        changed["api_key"] = "" if args.clear_api_key else read_secret(args.api_key_file, "--api-key-file", "")
    reward = api.update_reward(args.reward, **changed)
    if args.json:
        return print_json(reward)
    key_note = {True: " (API key stored)", False: ""}[bool(reward.get("api_key_set"))]
    print(f"reward {reward['id']} {reward['name']!r} updated: {reward['kind']} {what(reward)}".rstrip() + key_note)


def delete_reward(api: ControlPlane, args: argparse.Namespace) -> None:
    api.delete_reward(args.reward)
    print(f"reward {args.reward} deleted")


def dry_run_reward(api: ControlPlane, args: argparse.Namespace) -> None:
    asked = {"dataset": args.dataset, "rows": args.rows, "run": args.run, "step": args.step,
             "completions": args.completion or None}
    answer = api.dry_run_reward(args.reward, **{name: value for name, value in asked.items() if value is not None})
    if "state" in answer:  # a judge or a reward model: queued for the control plane's consumer
        answer = follow_dry_run(lambda: api.reward_dry_run(args.reward, answer["id"]))
    if args.json:
        return print_json(answer)
    for row in answer["rows"]:
        print(f"row {row['index']}: scores {row['scores']}" + (f" ({row['error']})" if row.get("error") else ""))


def what(reward: dict) -> str:
    """A reward in a few words: the built-in's name, or the model a judge or reward model asks."""
    params = reward.get("params") or {}
    if reward["kind"] == "builtin":
        return reward["builtin"]
    if reward["kind"] == "judge":
        where = params.get("base_url") if params.get("endpoint") == "url" else "served"
        return f"{params.get('mode', '')} by {params.get('model', '')} ({where})"
    return params.get("model", "")


def reward_params(args: argparse.Namespace) -> dict:
    params = read_json_object(args.params_file, "--params-file") if args.params_file else {}
    if args.template_file:
        params["template"] = read_text(args.template_file, "--template-file")
    shorthands = {"template": args.template, "model": args.model, "mode": args.mode, "base_url": args.base_url}
    params.update({name: value for name, value in shorthands.items() if value is not None})
    if args.base_url:
        params["endpoint"] = "url"
    if args.label:
        params["labels"] = {label: number for label, number in map(label_value, args.label)}
    for pair in args.set:
        set_dotted(params, pair)
    return params


def api_key(args: argparse.Namespace, params: dict) -> str | None:
    """The key from --api-key-file, else from GRPO_JUDGE_API_KEY for an endpoint judge; None: none sent."""
    endpoint_judge = args.kind == "judge" and params.get("endpoint") == "url"
    return read_secret(args.api_key_file, "--api-key-file", os.environ.get(KEY_ENV, "") if endpoint_judge else "")




def label_value(pair: str) -> tuple[str, float]:
    label, sep, raw = pair.rpartition("=")
    try:
        if sep and label:
            return label, float(raw)
    except ValueError:
        pass
    raise InputRefused(f"--label takes LABEL=NUMBER (e.g. --label correct=1), not {pair!r}")
