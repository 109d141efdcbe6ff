"""`grpo runs ...`: runs made, started, followed, cancelled, resumed, cloned and deleted, what
they reported (logs, metrics, samples, alarms), and where their step time goes (diagnose)."""
import argparse
import json
import time

from tqdm import tqdm

from client.api import FINISHED, ControlPlane
from client.cli.inputs import pairs, weights
from client.cli.output import Subparsers, add_json_flag, add_list_verb, add_page_flag, number, one_line, print_json, say
from client.exit_codes import OK, RUN_NOT_SUCCEEDED
from client.resources.runs import LOG_PAGE
from client.session import Json
from client.tables import print_table

# What the progress bar shows, by the short name it shows.
WATCHED_METRICS = {"rollout/reward_mean": "reward", "train/loss": "loss", "eval/pass@1": "eval pass@1"}
VERBS = ("{list,show,create,update,start,watch,cancel,resume,clone,delete,logs,metrics,samples,sample-steps,alarms,"
         "diagnose}")


def add_parser(areas: Subparsers) -> None:
    runs = areas.add_parser("runs", help="list, create, start, watch, cancel, resume, clone, delete runs; their "
                                         "logs, metrics, samples and alarms; diagnose a slow one")
    verbs = runs.add_subparsers(required=True, metavar=VERBS)
    add_list_verb(verbs, "your runs, newest first", list_runs)
    add_create_parser(verbs)
    for verb, command, what in (("show", show_run, "one run: its status, step, rewards and config"),
                                ("start", start_run, "queue a created run for a worker"),
                                ("cancel", cancel_run, "stop a queued or running run")):
        sub = verbs.add_parser(verb, help=what)
        sub.add_argument("run", type=int, help="run id")
        add_json_flag(sub)
        sub.set_defaults(command=command)
    add_resume_parser(verbs)
    clone = verbs.add_parser("clone", help="a new run (not started) with a run's dataset, rewards and settings")
    clone.add_argument("run", type=int, help="run id")
    clone.add_argument("--name", help="the new run's name (default: the run's, with (copy))")
    add_json_flag(clone)
    clone.set_defaults(command=clone_run)
    update = verbs.add_parser("update", help="rename a run, or set knobs of one not started yet")
    update.add_argument("run", type=int, help="run id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                        help="a knob, on top of the run's config (repeat)")
    add_json_flag(update)
    update.set_defaults(command=update_run)
    delete = verbs.add_parser("delete", help="delete a run that is not active, with what it reported")
    delete.add_argument("run", type=int, help="run id")
    delete.set_defaults(command=delete_run)
    watch = verbs.add_parser("watch", help=f"follow a run until it ends (exit {OK} if it succeeded, "
                                           f"{RUN_NOT_SUCCEEDED} if not)")
    watch.add_argument("run", type=int, help="run id")
    watch.add_argument("--every", type=float, default=2.0, help="seconds between looks")
    add_json_flag(watch)
    watch.set_defaults(command=watch_run)
    add_telemetry_parsers(verbs)


def add_create_parser(verbs: Subparsers) -> None:
    create = verbs.add_parser("create", help="a run from a dataset (or an environment), rewards and knobs "
                                             "(not started)")
    create.add_argument("--name", required=True, help="the run's name")
    create.add_argument("--dataset", type=int, help="dataset id (may be left out with --environment)")
    create.add_argument("--environment", type=int, help="environment id: multi-turn rollouts in it (its dataset "
                                                        "and rubric unless given)")
    create.add_argument("--reward", action="append", default=[], metavar="ID[:WEIGHT]",
                        help="reward function id, with its weight (default 1) (repeat)")
    create.add_argument("--config", type=int, help="training config id to start from")
    create.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE", help="a knob (repeat)")
    create.add_argument("--eval-dataset", type=int, help="dataset id evaluations run on (with --set eval_steps=N); "
                        "default: eval_holdout_fraction of --dataset")
    create.add_argument("--eval-reward", action="append", default=[], metavar="ID[:WEIGHT]",
                        help="reward function id that judges evaluations (repeat); default: the training rewards")
    add_json_flag(create)
    create.set_defaults(command=create_run)


def add_telemetry_parsers(verbs: Subparsers) -> None:
    logs = verbs.add_parser("logs", help="the run's log lines, oldest first")
    logs.add_argument("run", type=int, help="run id")
    logs.add_argument("--level", choices=("debug", "info", "warning", "error"), help="this level and above")
    logs.add_argument("--after", type=int, default=0, help="only lines after this line id")
    add_json_flag(logs)
    logs.set_defaults(command=show_logs)
    metrics = verbs.add_parser("metrics", help="each metric's latest value (--json: the series)")
    metrics.add_argument("run", type=int, help="run id")
    metrics.add_argument("--name", action="append", default=[], help="a metric, such as train/loss (repeat; "
                                                                     "default: all)")
    metrics.add_argument("--points", type=int, default=500, help="at most this many points per series")
    add_json_flag(metrics)
    metrics.set_defaults(command=show_metrics)
    samples = verbs.add_parser("samples", help="the completions the trainer logged, with their rewards")
    samples.add_argument("run", type=int, help="run id")
    samples.add_argument("--step", type=int, help="only this step (grpo runs sample-steps RUN lists them)")
    add_page_flag(samples)
    add_json_flag(samples)
    samples.set_defaults(command=show_samples)
    steps = verbs.add_parser("sample-steps", help="the steps that have sampled completions")
    steps.add_argument("run", type=int, help="run id")
    add_json_flag(steps)
    steps.set_defaults(command=show_sample_steps)
    alarms = verbs.add_parser("alarms", help="every alarm the run raised, in step order")
    alarms.add_argument("run", type=int, help="run id")
    add_json_flag(alarms)
    alarms.set_defaults(command=show_alarms)
    diagnose = verbs.add_parser("diagnose", help="where the recent steps' time goes, the bottleneck, and the knob "
                                                 "that moves it")
    diagnose.add_argument("run", type=int, help="run id")
    add_json_flag(diagnose)
    diagnose.set_defaults(command=show_diagnosis)


def list_runs(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.runs(args.page)
    if args.json:
        return print_json(answer)
    rows = [(run["id"], run["name"], run["status"], f"{run['current_step']}/{run['max_steps']}")
            for run in answer["results"]]
    print_table(("id", "name", "status", "step"), rows)


def show_run(api: ControlPlane, args: argparse.Namespace) -> None:
    run = api.run(args.run)
    if args.json:
        return print_json(run)
    say_status(run)
    rewards = ", ".join(f"{reward['name']} ×{reward['weight']:g}" for reward in run["rewards"]) or "none"
    print(f"step {run['current_step']}/{run['max_steps']}, attempt {run['attempt']}; dataset {run['dataset']}, "
          f"rewards {rewards}")
    if run["error_message"]:
        print(f"error: {run['error_message']}")
    print("actions now: " + (", ".join(run["allowed_actions"]) or "none"))


def create_run(api: ControlPlane, args: argparse.Namespace) -> None:
    run = api.create_run(args.name, args.dataset, weights(args.reward, "--reward"), pairs(args.set), args.config,
                         eval_dataset=args.eval_dataset, eval_rewards=weights(args.eval_reward, "--eval-reward"),
                         environment=args.environment)
    if args.json:
        return print_json(run)
    print(f"run {run['id']} {run['name']!r} created ({run['status']}); start it with: grpo runs start {run['id']}")


def start_run(api: ControlPlane, args: argparse.Namespace) -> None:
    answer_status(api.start_run(args.run), args)


def cancel_run(api: ControlPlane, args: argparse.Namespace) -> None:
    answer_status(api.cancel_run(args.run), args)


def add_resume_parser(verbs) -> None:
    resume = verbs.add_parser("resume", help="go on from the last checkpoint of a failed, cancelled or lost run, "
                                             "on as many machines as the cluster then has")
    resume.add_argument("run", type=int, help="run id")
    resume.add_argument("--trainer-machines", type=int, help="machines the trainer spans from now on")
    resume.add_argument("--trainer-processes", type=int, help="trainer processes on each machine from now on")
    resume.add_argument("--inference-machines", type=int, help="machines of vLLM's own from now on")
    add_json_flag(resume)
    resume.set_defaults(command=resume_run)


def resume_run(api: ControlPlane, args: argparse.Namespace) -> None:
    machines = {knob: getattr(args, knob) for knob in ("trainer_machines", "trainer_processes", "inference_machines")
                if getattr(args, knob) is not None}
    answer_status(api.resume_run(args.run, **machines), args)


def clone_run(api: ControlPlane, args: argparse.Namespace) -> None:
    run = api.clone_run(args.run, args.name)
    if args.json:
        return print_json(run)
    print(f"run {run['id']} {run['name']!r} created from run {args.run}; start it with: grpo runs start {run['id']}")


def update_run(api: ControlPlane, args: argparse.Namespace) -> None:
    changed: dict = {"name": args.name} if args.name else {}
    if args.set:  # on top of the run's own knobs: a config sent alone would start again from its template's
        changed["config"] = pairs(args.set, "--set", api.run(args.run)["config"])
    answer_status(api.update_run(args.run, **changed), args)


def delete_run(api: ControlPlane, args: argparse.Namespace) -> None:
    api.delete_run(args.run)
    print(f"run {args.run} deleted")


def watch_run(api: ControlPlane, args: argparse.Namespace) -> int:
    """A progress bar of steps (stderr), the latest reward, loss and held-out pass@1, and the run's
    alarms, warnings and errors as they come."""
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
    if args.json:
        print_json(run)
    else:
        print(f"run {run['id']} {run['status']} at step {run['current_step']}"
              + (f": {run['error_message']}" if run["error_message"] else ""))
    return OK if run["status"] == "succeeded" else RUN_NOT_SUCCEEDED


def progress_note(api: ControlPlane, run: Json) -> str:
    latest = api.last_metrics(run["id"], list(WATCHED_METRICS)) if run["current_step"] else {}
    values = " ".join(f"{WATCHED_METRICS[name]} {value:.3g}" for name, value in latest.items())
    return f"{run['status']} {values}".strip()


def show_logs(api: ControlPlane, args: argparse.Namespace) -> None:
    lines = api.logs(args.run, after=args.after, level=args.level)
    if args.json:
        return print_json(lines)
    for line in lines:
        print(f"{line['time']} {line['level']:<7} {line['source']}: {line['message']}")
    if len(lines) == LOG_PAGE:
        say(f"more lines may follow: grpo runs logs {args.run} --after {lines[-1]['id']}")


def show_metrics(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.metrics(args.run, args.name or None, max_points=args.points)
    if args.json:
        return print_json(answer)
    rows = [(name, series["step"][-1], f"{series['value'][-1]:.6g}")
            for name, series in answer["series"].items() if series["value"]]
    print_table(("metric", "step", "latest"), rows)


def show_samples(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.samples(args.run, step=args.step, page=args.page)
    if args.json:
        return print_json(answer)
    print_table(("step", "group", "reward", "completion"),
                [(s["step"], s["group"], number(s["total_reward"], 3), one_line(s["completion"]))
                 for s in answer["results"]])


def show_sample_steps(api: ControlPlane, args: argparse.Namespace) -> None:
    steps = api.sample_steps(args.run)
    print_json({"steps": steps}) if args.json else print(" ".join(map(str, steps)))


def show_alarms(api: ControlPlane, args: argparse.Namespace) -> None:
    alarms = api.alarms(args.run)
    if args.json:
        return print_json(alarms)
    print_table(("step", "kind", "stopped", "message"),
                [(a["step"], a["kind"], "yes" if a["stopped_run"] else "", a["message"]) for a in alarms])


def show_diagnosis(api: ControlPlane, args: argparse.Namespace) -> None:
    """The sentence, the time split as a table, then each suggestion with its numbers."""
    answer = api.diagnosis(args.run)
    if args.json:
        return print_json(answer)
    print(answer["sentence"])
    if answer["time_split"]:
        print()
        print_table(("part", "seconds", "share"), [(row["part"].replace("_", " "), f"{row['seconds']:.2f}",
                                                    f"{row['share']:.0%}") for row in answer["time_split"]])
    for suggestion in answer["suggestions"]:
        print(f"\nsuggest {knob_change(suggestion)}: {suggestion['why']}")


def knob_change(suggestion: Json) -> str:
    """"max_inflight_tasks 4 -> 8", with the knobs changed alongside."""
    also = "".join(f", {knob} {as_set(value)}" for knob, value in suggestion.get("also_set", {}).items())
    return f"{suggestion['knob']} {as_set(suggestion['current'])} -> {as_set(suggestion['proposed'])}{also}"


def as_set(value) -> str:
    """A knob's value as --set KNOB=VALUE takes it: text as it is, anything else as JSON (true, null)."""
    return value if isinstance(value, str) else json.dumps(value)


def answer_status(run: Json, args: argparse.Namespace) -> None:
    print_json(run) if args.json else say_status(run)


def say_status(run: Json) -> None:
    print(f"run {run['id']} {run['name']!r}: {run['status']}")
