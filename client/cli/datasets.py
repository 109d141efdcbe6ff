"""`grpo datasets ...`: datasets uploaded from a file, taken from the Hugging Face Hub or made by a
generator; shown with their first rows; deleted."""
import argparse
from pathlib import Path

from client.api import ControlPlane
from client.cli.inputs import pairs, read_json_object
from client.cli.jobs import JobFailed
from client.cli.output import Subparsers, add_json_flag, add_list_verb, add_show_verb, one_line, print_json, say
from client.session import Json
from client.tables import print_table
from client.waiting import follow


def add_parser(areas: Subparsers) -> None:
    datasets = areas.add_parser("datasets", help="list, show, upload, create (Hub, generator), delete datasets")
    verbs = datasets.add_subparsers(required=True, metavar="{list,show,upload,create,update,delete}")
    add_list_verb(verbs, "your datasets", list_datasets)
    add_show_verb(verbs, "dataset", "one dataset: its columns, rows and a preview of the first", show_dataset)
    upload = verbs.add_parser("upload", help="upload a JSONL, CSV or Parquet file")
    upload.add_argument("file", type=Path, help="the file to upload")
    upload.add_argument("--name", help="default: the file's name")
    upload.add_argument("--prompt-column", default="prompt", help="the column that holds the prompt")
    upload.add_argument("--wait", action="store_true",
                        help="a large file is checked in the background: wait until it is ready, saying how far")
    add_json_flag(upload)
    upload.set_defaults(command=upload_dataset)
    add_create_parser(verbs)
    update = verbs.add_parser("update", help="rename a dataset or change its description (its rows never change)")
    update.add_argument("dataset", type=int, help="dataset id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--description", help="a new description")
    add_json_flag(update)
    update.set_defaults(command=update_dataset)
    delete = verbs.add_parser("delete", help="delete a dataset no run uses")
    delete.add_argument("dataset", type=int, help="dataset id")
    delete.set_defaults(command=delete_dataset)


def add_create_parser(verbs: Subparsers) -> None:
    create = verbs.add_parser("create", help="a dataset from the Hugging Face Hub (--hub-id) or a generator "
                                             "(--generator)")
    create.add_argument("--name", required=True, help="a name of yours no other dataset has")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--hub-id", help="a Hub dataset, as owner/name (the worker loads it)")
    source.add_argument("--generator", help="a built-in generator's name, such as arithmetic")
    create.add_argument("--split", default="train", help="with --hub-id: the split to train on")
    create.add_argument("--params-file", type=Path, help="with --generator: a JSON object of its params")
    create.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="with --generator: a param, on top of --params-file (repeat)")
    create.add_argument("--prompt-column", default="prompt", help="the column that holds the prompt")
    add_json_flag(create)
    create.set_defaults(command=create_dataset)


def list_datasets(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.datasets(args.page)
    if args.json:
        return print_json(answer)
    rows = [(d["id"], d["name"], d["source"], d["row_count"] if d["row_count"] is not None else "", d["state"])
            for d in answer["results"]]
    print_table(("id", "name", "source", "rows", "state"), rows)


def show_dataset(api: ControlPlane, args: argparse.Namespace) -> None:
    dataset = api.dataset(args.dataset)
    if args.json:
        return print_json(dataset)
    print(describe(dataset))
    print(f"columns: {', '.join(dataset['columns'] or [])}; prompt column {dataset['prompt_column']!r}")
    if dataset["refusal"]:
        print(f"refused: {dataset['refusal']}")
    for index, row in enumerate(dataset["preview"] or []):
        print(f"[{index}] " + one_line(row.get(dataset["prompt_column"], row), 100))


def upload_dataset(api: ControlPlane, args: argparse.Namespace) -> None:
    dataset = api.upload_dataset(args.file, args.name or args.file.stem, args.prompt_column)
    if args.wait and dataset["state"] == "checking":
        dataset = wait_until_checked(api, dataset)
    if args.json:
        return print_json(dataset)
    print(describe(dataset))


def wait_until_checked(api: ControlPlane, dataset: Json) -> Json:
    """Follows the background check of a large upload; JobFailed with its refusal."""
    checked = follow(lambda: api.dataset(dataset["id"]), lambda d: d["state"] != "checking",
                     lambda d: f"dataset {d['id']}: {d['state']} {check_progress(d)}".rstrip(), say)
    if checked["state"] == "refused":
        raise JobFailed(f"dataset {checked['id']} refused: {checked['refusal']}")
    return checked


def check_progress(dataset: Json) -> str:
    progress = dataset.get("check_progress") or {}
    if "bytes" in progress and progress.get("total_bytes"):
        return f"{progress.get('rows', 0)} rows, {progress['bytes']}/{progress['total_bytes']} bytes"
    return ""


def create_dataset(api: ControlPlane, args: argparse.Namespace) -> None:
    if args.hub_id:
        dataset = api.create_hub_dataset(args.name, args.hub_id, args.split, args.prompt_column)
    else:
        start = read_json_object(args.params_file, "--params-file") if args.params_file else {}
        dataset = api.create_generated_dataset(args.name, args.generator, pairs(args.param, "--param", start),
                                               args.prompt_column)
    if args.json:
        return print_json(dataset)
    print(describe(dataset))


def update_dataset(api: ControlPlane, args: argparse.Namespace) -> None:
    fields = {"name": args.name, "description": args.description}
    dataset = api.update_dataset(args.dataset, **{name: value for name, value in fields.items() if value is not None})
    if args.json:
        return print_json(dataset)
    print(describe(dataset))


def delete_dataset(api: ControlPlane, args: argparse.Namespace) -> None:
    api.delete_dataset(args.dataset)
    print(f"dataset {args.dataset} deleted")


def describe(dataset: Json) -> str:
    """`dataset 4 'sums': 20 rows (jsonl)`, or what it comes from while the rows are not known."""
    origin = {"upload": dataset["file_format"], "hub": f"hub {dataset['hub_id']}:{dataset['split']}",
              "generator": f"generator {dataset['generator']}"}.get(dataset["source"], dataset["source"])
    rows = f"{dataset['row_count']} rows" if dataset["row_count"] is not None else dataset["state"]
    return f"dataset {dataset['id']} {dataset['name']!r}: {rows} ({origin})"
