"""What every artifact store shares: where a run's checkpoints are kept in it, and the error
it gives when it cannot answer now. A module of its own so that the stores (stores.py's
filesystem, s3_store.py's bucket) and the choice between them import it, not each other."""


class StoreUnavailable(Exception):
    """The store could not take or give the files now (unreachable, refused); worth trying later."""


def run_key(run_id: int) -> str:
    return f"runs/{run_id}"


def step_folder(step: int) -> str:
    """A checkpoint folder's name, as the trainer writes it (step-0000040)."""
    return f"step-{step:07d}"


def checkpoint_key(run_id: int, step: int) -> str:
    return f"{run_key(run_id)}/checkpoints/{step_folder(step)}"
