"""`grpo configs ...`: training configs (knobs by name) made from a preset and knobs, shown,
changed, deleted; and the presets there are."""
import argparse
from pathlib import Path

from client.api import ControlPlane
from client.cli.inputs import pairs, read_json_object
from client.cli.output import Subparsers, add_json_flag, add_list_verb, add_show_verb, print_json, show_json
from client.tables import print_table


def add_parser(areas: Subparsers) -> None:
    configs = areas.add_parser("configs", help="list, show, create, update, delete training configs; presets")
    verbs = configs.add_subparsers(required=True, metavar="{list,show,create,update,delete,presets}")
    add_list_verb(verbs, "your training configs", list_configs)
    add_show_verb(verbs, "config", "one config with every knob's value", show_config)
    create = verbs.add_parser("create", help="a config from a preset (or the defaults) and knobs")
    create.add_argument("--name", required=True, help="a name of yours no other config has")
    create.add_argument("--description", default="", help="what it is for, for people")
    add_knob_flags(create)
    create.set_defaults(command=create_config)
    update = verbs.add_parser("update", help="set knobs (or lay a preset under them), rename")
    update.add_argument("config", type=int, help="config id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--description", help="a new description")
    add_knob_flags(update)
    update.set_defaults(command=update_config)
    delete = verbs.add_parser("delete", help="delete a config")
    delete.add_argument("config", type=int, help="config id")
    delete.set_defaults(command=delete_config)
    presets = verbs.add_parser("presets", help="the presets a config may start from")
    add_json_flag(presets)
    presets.set_defaults(command=list_presets)


def add_knob_flags(command: argparse.ArgumentParser) -> None:
    command.add_argument("--preset", help="start from this preset (grpo configs presets lists them)")
    command.add_argument("--values-file", type=Path, help="a JSON object of knobs; --set goes on top")
    command.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE", help="a knob (repeat)")
    add_json_flag(command)


def list_configs(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.configs(args.page)
    if args.json:
        return print_json(answer)
    print_table(("id", "name", "model", "steps", "description"),
                [(c["id"], c["name"], c["values"].get("model", ""), c["values"].get("max_steps", ""),
                  c["description"]) for c in answer["results"]])


def show_config(api: ControlPlane, args: argparse.Namespace) -> None:
    config = api.config(args.config)
    if args.json:
        return print_json(config)
    print(f"config {config['id']} {config['name']!r}" + (f": {config['description']}" if config["description"] else ""))
    show_json(config["values"])


def knobs(args: argparse.Namespace) -> dict:
    start = read_json_object(args.values_file, "--values-file") if args.values_file else {}
    return pairs(args.set, "--set", start)


def create_config(api: ControlPlane, args: argparse.Namespace) -> None:
    config = api.create_config(args.name, knobs(args), preset=args.preset, description=args.description)
    if args.json:
        return print_json(config)
    print(f"config {config['id']} {config['name']!r} created"
          + (f" from preset {args.preset}" if args.preset else ""))


def update_config(api: ControlPlane, args: argparse.Namespace) -> None:
    fields = {"name": args.name, "description": args.description, "preset": args.preset}
    changed = {name: value for name, value in fields.items() if value is not None}
    if args.set or args.values_file:
        changed["values"] = knobs(args)
    config = api.update_config(args.config, **changed)
    if args.json:
        return print_json(config)
    print(f"config {config['id']} {config['name']!r} updated")


def delete_config(api: ControlPlane, args: argparse.Namespace) -> None:
    api.delete_config(args.config)
    print(f"config {args.config} deleted")


def list_presets(api: ControlPlane, args: argparse.Namespace) -> None:
    presets = api.config_presets()
    if args.json:
        return print_json(presets)
    print_table(("preset", "knobs it sets"),
                [(preset["name"], ", ".join(f"{knob}={value}" for knob, value in preset["values"].items()))
                 for preset in presets])
