"""Where this process stands among the trainer's processes, from the variables torchrun sets."""
import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Topology:
    rank: int = 0
    world_size: int = 1
    machine: int = 0  # torchrun's node rank: 0 is the machine that also serves vLLM
    machines: int = 1

    @property
    def leads(self) -> bool:
        """Rank 0: the one process that talks to vLLM and the control plane."""
        return self.rank == 0

    @property
    def several(self) -> bool:
        return self.world_size > 1

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Topology":
        return cls(rank=int(environ.get("RANK", 0)), world_size=int(environ.get("WORLD_SIZE", 1)),
                   machine=int(environ.get("GROUP_RANK", 0)), machines=int(environ.get("GROUP_WORLD_SIZE", 1)))


SINGLE = Topology()
