"""What a diagnosis measured, in one place: the sentence and the suggestions both read it."""
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runs.diagnosis.time_split import TimeSplit
from runs.diagnosis.window import Window


@dataclass(frozen=True)
class Findings:
    window: Window
    split: TimeSplit
    config: Mapping[str, Any]
    throughput: dict
    staleness: dict
    queue: dict
    bottleneck: str | None  # None: the logged parts do not explain the step time (bottleneck.unexplained)
    held_by: str | None  # the bound that held submission back: "inflight_cap", "staleness" or None
    device: str | None  # "cpu", "gpu" or None (unknown)

    def share(self, part: str) -> float:
        return self.split.share(part)

    def seconds(self, part: str) -> float:
        return self.split.seconds[part]

    def held_share(self) -> float | None:
        """The share of submit polls the bound that held submission back stopped."""
        if self.held_by == "inflight_cap":
            return self.queue["blocked_by_inflight_cap"]
        if self.held_by == "staleness":
            return self.staleness["blocked_by_staleness"]
        return None
