"""Whether an error of the leading process means a process of the trainer on another machine is
gone: its collective found the connection closed. The leader then does not report the run failed
with that error, which names an address and no cause: the worker that placed the machines names
which one was lost or killed, and its ranks (worker/supervision/endings.py, placement/trainer_machines.py)."""
# What gloo and NCCL say when the process at the other end of a connection went away (torch 2.13):
# gloo's errors are plain RuntimeErrors, not DistError.
PEER_GONE = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "NCCL communicator was aborted")


def lost_a_peer(error: BaseException) -> bool:
    from torch.distributed import DistNetworkError

    return isinstance(error, DistNetworkError) or any(sign in str(error) for sign in PEER_GONE)
