"""A process that runs built-in rewards and built-in environment steps for the web server's dry
runs, where a time limit can stop them (the parent, runs/dry_runs/builtin_process.py, kills it when its
time is up; why: docs/capabilities/rewards.md#dry-runs). Memory capped, not confined.

Started as `python -m worker.trainer.for_control_plane.builtin_child <memory bytes>`; protocol as
the sandbox's (length-prefixed JSON frames, worker/trainer/rewards/sandbox/protocol.py):
    {"id", "op": "reward", "builtin", "params", "prompts", "completions", "columns"} → {"values"}
    {"id", "op": "env_step", "builtin", "params", "tool_format", "messages", "row"}  → {"reply"}
answered {"id", "ok": true, ...} or {"id", "ok": false, "kind": "exception", "message"}.
"""
import os
import resource
import sys
import traceback

from worker.trainer.rewards.sandbox import protocol

MAX_REQUEST_BYTES = 64 * 1024 * 1024


def reward(request: dict) -> dict:
    from worker.trainer.rewards.builtins import build_builtin

    function = build_builtin(request["builtin"], request["params"])
    return {"values": function(request["prompts"], request["completions"], **request["columns"])}


def env_step(request: dict) -> dict:
    from worker.trainer.environments.loading import load_environment
    from worker.trainer.spec import EnvironmentSpec

    spec = EnvironmentSpec(kind="builtin", name="dry run", builtin=request["builtin"], params=request["params"])
    environment = load_environment(spec, request["tool_format"])
    return {"reply": environment.step(request["messages"], request["row"])}


OPERATIONS = {"reward": reward, "env_step": env_step}


def answer(request: dict) -> dict:
    try:
        return {"ok": True, **OPERATIONS[request["op"]](request)}
    except MemoryError:
        return {"ok": False, "kind": "memory", "message": "the call ran out of memory"}
    except Exception as exc:  # noqa: BLE001 (a built-in given the wrong columns, say: the parent shows it)
        return {"ok": False, "kind": "exception",
                "message": traceback.format_exception_only(type(exc), exc)[-1].strip()}


def main() -> None:
    memory_bytes = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    protocol.write_frame(stdout, {"pid": os.getpid()})
    while True:
        try:
            request = protocol.read_frame(stdin, MAX_REQUEST_BYTES)
        except EOFError:
            return  # the parent closed our stdin: done
        protocol.write_frame(stdout, {"id": request.get("id"), **answer(request)})


if __name__ == "__main__":
    main()
