"""What every way of pushing weights into the vLLM server is: the one interface the trainer
calls and the backends (filesystem, nccl, lora_adapter) meet. How a push fails, WeightSyncError,
is inference/server_api.py's, the vLLM admin client every backend talks through."""
from typing import Protocol


class WeightSync(Protocol):
    def push(self, model, version: int) -> float:
        """Makes the server generate with `model`'s current weights, tagged `version`."""

    def last_push_note(self) -> str | None:
        """How the latest push reached the server, for the run's log (None: nothing to say)."""

    def last_push_parts(self) -> dict[str, float]:
        """Seconds of the latest push's parts by name, reported beside its total: what a slow
        sync is located by ({}: not split)."""

    def close(self) -> None:
        ...
