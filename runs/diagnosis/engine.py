"""diagnose(series, config): where a run's step time goes, what holds it back, and which knob
moves it, as the JSON `GET /api/runs/<id>/diagnosis/` answers (docs/capabilities/diagnosis.md).

Pure: plain series in, a Diagnosis out, no Django, so bench/diagnosis.py and tests call it on a
run's events directly. `series` maps a metric name to its (step, value) points, as
runs.telemetry.metrics_query gives them; `config` is the run's frozen config (TrainingConfig fields).
"""
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.diagnosis import pipeline
from runs.diagnosis.bottleneck import bottleneck_of, bound_that_held, device_of, staleness_bound
from runs.diagnosis.findings import Findings
from runs.diagnosis.suggestions import suggestions_for
from runs.diagnosis.time_split import TimeSplit, split_of
from runs.diagnosis.window import Window
from runs.diagnosis.wording import sentence_of, too_short_sentence
from worker.trainer.metric_names import (
    ASYNC_AHEAD_BOUND,
    ASYNC_BLOCKED_BY_QUEUE,
    ASYNC_PAUSED_SHARE,
    ROLLOUT_GROUP_GENERATION_S,
    ROLLOUT_GROUP_SCORING_S,
)

MIN_STEPS = 5  # measured steps after the first a diagnosis needs; fewer: "too_short"
EVIDENCE = {  # evidence name -> (section, key) of the numbers behind the sentence
    "generation_tokens_per_s": ("throughput", "generation_tokens_per_s"),
    "training_tokens_per_s": ("throughput", "training_tokens_per_s"),
    "blocked_by_inflight_cap": ("queue", "blocked_by_inflight_cap"),
    "blocked_by_staleness": ("staleness", "blocked_by_staleness"),
    "in_flight_mean": ("queue", "in_flight_mean"),
    "cap_mean": ("queue", "cap_mean"),
    "queue_fullness": ("queue", "fullness"),
    "dropped_share": ("staleness", "dropped_share"),
}
ROLLOUT_TIMES = (ROLLOUT_GROUP_GENERATION_S, ROLLOUT_GROUP_SCORING_S, ASYNC_AHEAD_BOUND,
                 ASYNC_BLOCKED_BY_QUEUE, ASYNC_PAUSED_SHARE)


@dataclass(frozen=True)
class Diagnosis:
    status: str  # "ok" or "too_short"
    steps_measured: int
    window: list[int] | None
    bottleneck: str | None
    sentence: str
    time_split: list[dict]
    step_seconds: float | None
    throughput: dict
    staleness: dict
    queue: dict
    suggestions: list[dict] = field(default_factory=list)
    evidence: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return tidy({"status": self.status, "steps_measured": self.steps_measured, "window": self.window,
                "bottleneck": self.bottleneck, "sentence": self.sentence, "time_split": self.time_split,
                "step_seconds": self.step_seconds, "throughput": self.throughput, "staleness": self.staleness,
                "queue": self.queue, "suggestions": self.suggestions, "evidence": self.evidence})


def tidy(value: Any) -> Any:
    """Floats to 6 significant digits (12.4, not 12.400000000000004), through lists and dicts."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: tidy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tidy(item) for item in value]
    return value


def diagnose(series: Mapping[str, Sequence[tuple[int, float]]], config: Mapping[str, Any],
             device: str | None = None) -> Diagnosis:
    """`device` ("cpu" or "gpu"), where the caller knows it; otherwise read from the config and
    the metrics, and where they do not tell, a suggestion that depends on it is left out."""
    window = Window.recent(series)
    split = split_of(window)
    sections = {"throughput": pipeline.throughput(window), "staleness": pipeline.staleness(window, config),
                "queue": pipeline.queue(window, config)}
    measured = len(window.measured)
    common: dict[str, Any] = {"steps_measured": measured, "window": window.bounds,
                              "time_split": split.as_rows() if split else [],
                              "step_seconds": split.step_seconds if split else None, **sections}
    if split is None or measured < MIN_STEPS:
        return Diagnosis("too_short", bottleneck=None, sentence=too_short_sentence(measured, MIN_STEPS),
                         evidence=evidence_of(window, sections, split), **common)
    held_by = bound_that_held(sections["queue"], sections["staleness"], staleness_bound(window, config))
    findings = Findings(window, split, config, bottleneck=bottleneck_of(split, window), held_by=held_by,
                        device=device or device_of(window, config), **sections)
    return Diagnosis("ok", bottleneck=findings.bottleneck, sentence=sentence_of(findings),
                     suggestions=suggestions_for(findings), evidence=evidence_of(window, sections, split), **common)


def evidence_of(window: Window, sections: Mapping[str, dict], split: TimeSplit | None) -> dict[str, float]:
    """The numbers the sentence and the suggestions rest on, by name; those the run did not log left out."""
    rows = split.as_rows() if split else []
    found: dict[str, float | None] = {f"{row['part']}_share": row["share"] for row in rows}
    found["step_seconds"] = split.step_seconds if split else None
    found.update({name: sections[section][key] for name, (section, key) in EVIDENCE.items()})
    found.update({name.split("/", 1)[1]: window.mean(name) for name in ROLLOUT_TIMES})
    return {name: float(value) for name, value in found.items() if value is not None}
