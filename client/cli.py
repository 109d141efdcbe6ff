"""`./grpo`: the control plane from a shell. `./grpo --help` lists the commands.

The server comes from --url or GRPO_URL (default http://127.0.0.1:8000); plain http:// is for
this machine only, unless --insecure. The account's API token (the admin's Auth Token page, or
`manage.py drf_create_token <user>`) comes from GRPO_TOKEN, or from ~/.config/grpo/token (or the
file GRPO_TOKEN_FILE names) readable by you alone (chmod 600); never from a flag, which `ps`
would show. A refused request prints the server's reason and exits with 2.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

from tqdm import tqdm

from client import cli_rewards
from client.api import FINISHED, ApiError, ControlPlane
from client.credentials import TOKEN_FLAG_REFUSAL, CredentialsError, check_url, names_token_flag, read_token, token_file
from client.tables import print_table

# What the progress bar shows, by the short name it shows.
WATCHED_METRICS = {"rollout/reward_mean": "reward", "train/loss": "loss", "eval/pass@1": "eval pass@1"}


def main(argv: list[str] | None = None, api: ControlPlane | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if names_token_flag(argv):  # before parsing: the token is never echoed back in a usage line
        print(TOKEN_FLAG_REFUSAL.format(path=token_file(os.environ)), file=sys.stderr)
        return 2
    if cli_rewards.names_key_flag(argv):  # likewise: a key's value is never echoed in a usage line
        print(cli_rewards.KEY_FLAG_REFUSAL, file=sys.stderr)
        return 2
    args = parser().parse_args(argv)
    if api is None:
        try:
            check_url(args.url, args.insecure)  # first: a refused URL needs no token read
            api = ControlPlane(args.url, read_token(), insecure=args.insecure)
        except CredentialsError as exc:
            print(f"grpo: {exc}", file=sys.stderr)
            return 2
    try:
        return args.command(api, args) or 0
    except ApiError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="grpo", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    root.add_argument("--url", default=os.environ.get("GRPO_URL", "http://127.0.0.1:8000"))
    root.add_argument("--insecure", action="store_true",
                      help="send the token over plain http:// to another machine (a network you trust)")
    areas = root.add_subparsers(required=True, metavar="{runs,datasets,rewards}")

    runs = areas.add_parser("runs", help="list, create, start, watch, cancel, resume runs")
    verbs = runs.add_subparsers(required=True, metavar="{list,create,start,watch,cancel,resume}")
    verbs.add_parser("list", help="your runs, newest first").set_defaults(command=list_runs)
    create = verbs.add_parser("create", help="a run from a dataset, rewards and knobs (not started)")
    create.add_argument("--name", required=True)
    create.add_argument("--dataset", type=int, required=True, help="dataset id")
    create.add_argument("--reward", type=int, action="append", required=True, help="reward function id (repeat)")
    create.add_argument("--config", type=int, help="training config id to start from")
    create.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE", help="a knob (repeat)")
    create.add_argument("--eval-dataset", type=int, help="dataset id evaluations run on (with --set eval_steps=N); "
                        "default: eval_holdout_fraction of --dataset")
    create.add_argument("--eval-reward", type=int, action="append", default=[],
                        help="reward function id that judges evaluations (repeat); default: the training rewards")
    create.set_defaults(command=create_run)
    for verb, command in (("start", start_run), ("cancel", cancel_run), ("resume", resume_run)):
        sub = verbs.add_parser(verb, help=f"{verb} a run")
        sub.add_argument("run", type=int)
        sub.set_defaults(command=command)
    watch = verbs.add_parser("watch", help="follow a run until it ends (exit 0 if it succeeded)")
    watch.add_argument("run", type=int)
    watch.add_argument("--every", type=float, default=2.0, help="seconds between looks")
    watch.set_defaults(command=watch_run)

    datasets = areas.add_parser("datasets", help="list and upload datasets")
    verbs = datasets.add_subparsers(required=True, metavar="{list,upload}")
    verbs.add_parser("list", help="your datasets").set_defaults(command=list_datasets)
    upload = verbs.add_parser("upload", help="upload a JSONL, CSV or Parquet file")
    upload.add_argument("file", type=Path)
    upload.add_argument("--name", help="default: the file's name")
    upload.add_argument("--prompt-column", default="prompt")
    upload.set_defaults(command=upload_dataset)
    cli_rewards.add_parser(areas)
    return root


def list_runs(api, args):
    rows = [(run["id"], run["name"], run["status"], f"{run['current_step']}/{run['max_steps']}")
            for run in api.runs()["results"]]
    print_table(("id", "name", "status", "step"), rows)


def create_run(api, args):
    run = api.create_run(args.name, args.dataset, args.reward, knobs(args.set), args.config,
                         eval_dataset=args.eval_dataset, eval_rewards=args.eval_reward)
    print(f"run {run['id']} {run['name']!r} created ({run['status']}); start it with: grpo runs start {run['id']}")


def start_run(api, args):
    say_status(api.start_run(args.run))


def cancel_run(api, args):
    say_status(api.cancel_run(args.run))


def resume_run(api, args):
    say_status(api.resume_run(args.run))


def watch_run(api, args) -> int:
    """A progress bar of steps, the latest reward, loss and held-out pass@1, and the run's alarms,
    warnings and errors as they come."""
    run = api.run(args.run)
    last_line, alarms_seen = 0, 0
    with tqdm(total=run["max_steps"], desc=f"run {run['id']}", unit="step", dynamic_ncols=True) as bar:
        while True:
            bar.n = run["current_step"]
            bar.set_postfix_str(progress_note(api, run), refresh=True)
            for line in api.logs(run["id"], after=last_line, level="warning"):
                bar.write(f"{line['level']}: {line['message']}")
                last_line = line["id"]
            alarms = api.alarms(run["id"]) if run["alarms"] else []
            for alarm in alarms[alarms_seen:]:
                bar.write(f"alarm {alarm['kind']} at step {alarm['step']}: {alarm['message']}"
                          + (" (it stopped the run)" if alarm["stopped_run"] else ""))
            alarms_seen = max(alarms_seen, len(alarms))
            if run["status"] in FINISHED:
                break
            time.sleep(args.every)
            run = api.run(args.run)
    print(f"run {run['id']} {run['status']} at step {run['current_step']}"
          + (f": {run['error_message']}" if run["error_message"] else ""))
    return 0 if run["status"] == "succeeded" else 1


def progress_note(api, run) -> str:
    latest = api.last_metrics(run["id"], list(WATCHED_METRICS)) if run["current_step"] else {}
    values = " ".join(f"{WATCHED_METRICS[name]} {value:.3g}" for name, value in latest.items())
    return f"{run['status']} {values}".strip()


def list_datasets(api, args):
    rows = [(d["id"], d["name"], d["source"], d["row_count"] if d["row_count"] is not None else "")
            for d in api.datasets()["results"]]
    print_table(("id", "name", "source", "rows"), rows)


def upload_dataset(api, args):
    dataset = api.upload_dataset(args.file, args.name or args.file.stem, args.prompt_column)
    print(f"dataset {dataset['id']} {dataset['name']!r}: {dataset['row_count']} rows ({dataset['file_format']})")


def knobs(pairs: list[str]) -> dict:
    """KNOB=VALUE pairs; a value that reads as a number or true/false/null is sent as one."""
    values = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set takes KNOB=VALUE, not {pair!r}")
        try:
            values[name] = json.loads(raw)
        except ValueError:
            values[name] = raw
    return values


def say_status(run: dict) -> None:
    print(f"run {run['id']} {run['name']!r}: {run['status']}")
