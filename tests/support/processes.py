"""Finding the processes a run left behind, by their command line and environment."""
import os
import signal
from pathlib import Path


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if pid != os.getpid()]


def vllm_engine_processes(data_dir) -> set[int]:
    """vLLM's engine core and workers started for the control plane at `data_dir`. They rename
    themselves (VLLM::EngineCore), so their command lines name no model; left behind, they are
    reparented to init. Their environment still names the control plane's folder (setproctitle
    blanks its first entries, DATA_DIR among them, but DATABASE_URL survives), which tells them
    apart from other vLLM servers on the machine."""
    engines = set()
    for pid in processes_started_for(data_dir) & set(processes_mentioning("VLLM::")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"VLLM::"):
                engines.add(pid)
        except OSError:
            continue  # gone meanwhile
    return engines


def processes_started_for(data_dir) -> set[int]:
    """Every process whose environment names the control plane's folder `data_dir` (the worker,
    vLLM, the trainer and what they started), whatever it renamed itself to or was reparented to."""
    wanted = str(data_dir).encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if wanted in (entry / "environ").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue  # gone meanwhile, or not ours to read
    return found


def kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
