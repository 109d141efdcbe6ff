"""`grpo checkpoints ...`: a run's checkpoints listed, downloaded (whole, or exported as a ready
model or a LoRA adapter) with progress and going on after a broken connection, and pushed to the
Hugging Face Hub, followed until pushed.

The Hub token comes from the file --hub-secret-file names, or from HF_TOKEN; never from a flag's
value, which the shell's history and `ps` would keep. The control plane uses it for that push
only and never stores it.
"""
import argparse
import os
from pathlib import Path

import httpx

from client.api import ControlPlane
from client.cli.inputs import InputRefused, read_secret
from client.cli.jobs import JobFailed
from client.cli.output import ByteProgress, Subparsers, add_json_flag, print_json, say
from client.downloads import DownloadBroken, partial_of, resumable
from client.exit_codes import REFUSED, UNREACHABLE
from client.resources.checkpoints import PARTS
from client.session import Json
from client.tables import print_table
from client.waiting import follow

TOKEN_ENV = "HF_TOKEN"
TOKEN_FLAG_REFUSAL = ("--hub-token is not taken: a token on the command line shows in `ps` and the shell's "
                      f"history. Put it alone in a file and pass --hub-secret-file PATH, or set {TOKEN_ENV}")


def names_token_flag(argv: list[str]) -> bool:
    """`--hub-token VALUE` would reach argparse, whose usage error echoes it."""
    return any(arg == "--hub-token" or arg.startswith("--hub-token=") for arg in argv)


def add_parser(areas: Subparsers) -> None:
    checkpoints = areas.add_parser("checkpoints", help="list, download (export) a run's checkpoints; push one to "
                                                       "the Hugging Face Hub", description=__doc__)
    verbs = checkpoints.add_subparsers(required=True, metavar="{list,download,push,pushes}")
    listing = verbs.add_parser("list", help="a run's checkpoints, by step")
    listing.add_argument("run", type=int, help="run id")
    add_json_flag(listing)
    listing.set_defaults(command=list_checkpoints)
    download = verbs.add_parser("download", help="a checkpoint as a tar (or one file of it), with progress; run "
                                                 "again after a broken download to go on where it stopped")
    download.add_argument("run", type=int, help="run id")
    download.add_argument("checkpoint", type=int, help="checkpoint id (grpo checkpoints list RUN)")
    download.add_argument("--part", choices=PARTS, default="all",
                          help="all: the whole checkpoint, to resume from; model: a ready-to-serve model; adapter: "
                               "a LoRA adapter with its tokenizer")
    download.add_argument("--file", help="one file of it alone, by its path in the tar")
    download.add_argument("-o", "--output", type=Path,
                          help="where to write it (default: run-RUN-checkpoint-ID[-PART].tar, or the file's name)")
    add_json_flag(download)
    download.set_defaults(command=download_checkpoint)
    add_push_parser(verbs)
    pushes = verbs.add_parser("pushes", help="a run's pushes to the Hub, newest first, with their progress")
    pushes.add_argument("run", type=int, help="run id")
    add_json_flag(pushes)
    pushes.set_defaults(command=list_pushes)


def add_push_parser(verbs: Subparsers) -> None:
    push = verbs.add_parser("push", allow_abbrev=False, help="push a checkpoint to a Hugging Face Hub repository "
                                                             "(in the background; --wait follows it)")
    push.add_argument("run", type=int, help="run id")
    push.add_argument("checkpoint", type=int, help="checkpoint id")
    push.add_argument("--repo-id", required=True, help="owner/name of the Hub repository (created if needed)")
    push.add_argument("--part", choices=PARTS, default="model", help="model (default): ready to serve; adapter: a "
                                                                     "LoRA adapter; all: the whole checkpoint")
    push.add_argument("--public", action="store_true", help="create the repository public (default: private)")
    push.add_argument("--hub-secret-file", type=Path,
                      help=f"a file holding a Hub token with write access (else ${TOKEN_ENV})")
    push.add_argument("--wait", action="store_true", help="follow the push until it is pushed or failed")
    add_json_flag(push)
    push.set_defaults(command=push_checkpoint)


def list_checkpoints(api: ControlPlane, args: argparse.Namespace) -> None:
    checkpoints = api.checkpoints(args.run)
    if args.json:
        return print_json(checkpoints)
    print_table(("id", "step", "size", "stored", "created"),
                [(c["id"], c["step"], c["size_bytes"] if c["size_bytes"] is not None else "",
                  "yes" if c["in_store"] else "", c["created_at"]) for c in checkpoints])


def download_checkpoint(api: ControlPlane, args: argparse.Namespace) -> int | None:
    dest = args.output or default_name(args)
    bar = ByteProgress(dest.name)
    try:
        done = api.download_checkpoint(args.run, args.checkpoint, dest, part=args.part, file=args.file,
                                       progress=bar.callback())
    except httpx.TransportError as exc:
        kept = (f"what arrived is kept in {partial_of(dest)[0]}: run the same command again to go on from there"
                if resumable(dest) else "run the same command again (it starts over: nothing to go on from)")
        say(f"grpo: the download broke ({exc}); {kept}")
        return UNREACHABLE
    except DownloadBroken as exc:
        say(f"grpo: {exc}")
        return REFUSED
    finally:
        bar.close()
    if args.json:
        print_json({"path": str(done.path), "size": done.size, "resumed_from": done.resumed_from})
    else:
        went_on = f", going on from byte {done.resumed_from}" if done.resumed_from else ""
        print(f"{done.path}: {done.size} bytes{went_on}")
    return None


def default_name(args: argparse.Namespace) -> Path:
    if args.file:
        return Path(Path(args.file).name)
    part = "" if args.part == "all" else f"-{args.part}"
    return Path(f"run-{args.run}-checkpoint-{args.checkpoint}{part}.tar")


def push_checkpoint(api: ControlPlane, args: argparse.Namespace) -> None:
    token = read_secret(args.hub_secret_file, "--hub-secret-file", os.environ.get(TOKEN_ENV, ""))
    if token is None:
        raise InputRefused(f"a push needs a Hub token with write access: --hub-secret-file PATH, or set {TOKEN_ENV}")
    push = api.push_checkpoint(args.run, args.checkpoint, args.repo_id, token, part=args.part,
                               private=not args.public)
    if args.wait:
        push = follow(lambda: api.push(args.run, push["id"]), lambda p: p["status"] != "pushing", push_progress, say)
        if push["status"] == "failed":
            raise JobFailed(f"push {push['id']} to {push['repo_id']} failed: {push['detail']}")
    if args.json:
        return print_json(push)
    print(f"push {push['id']} of checkpoint {push['checkpoint']} to {push['repo_id']}: {push['status']}"
          + (f" {push['commit_url']}" if push.get("commit_url") else ""))


def push_progress(push: Json) -> str:
    return (f"push {push['id']}: {push['status']}, {push['files_done']}/{push['files_total']} files, "
            f"{push['bytes_done']}/{push['bytes_total']} bytes")


def list_pushes(api: ControlPlane, args: argparse.Namespace) -> None:
    pushes = api.pushes(args.run)
    if args.json:
        return print_json(pushes)
    print_table(("id", "step", "repo", "part", "status", "files", "detail"),
                [(p["id"], p["step"], p["repo_id"], p["part"], p["status"], f"{p['files_done']}/{p['files_total']}",
                  p["commit_url"] or p["detail"]) for p in pushes])
