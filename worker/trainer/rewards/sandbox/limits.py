"""What one sandboxed call (a reward, or an environment's start or step) may use."""
from dataclasses import asdict, dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    call_timeout_s: float = 10.0        # wall clock per call, from request sent to reply read
    load_timeout_s: float = 30.0        # first call of a source in a process: its imports and top level run too
    memory_bytes: int = 1024 * MIB      # address space of the process (RLIMIT_AS)
    processes: int = 64                 # processes and threads at once, ours included (RLIMIT_NPROC)
    output_bytes: int = 1 * MIB         # stdout + stderr per call; more is an error
    output_keep_chars: int = 8192       # how much of the output comes back to show
    reply_bytes: int = 4 * MIB          # largest reply read from a process
    sources_per_process: int = 16       # a process that has loaded this many sources is replaced

    def as_dict(self) -> dict:
        return asdict(self)
