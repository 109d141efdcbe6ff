"""The names of the metrics the trainer reports, each said once: the trainer emits them, the
control plane's alarms, diagnosis and pages read them, and the run page's charts read the copy
generated from this module (frontend/static/js/metric_names.js, `python -m
scripts.write_metric_names`). A renamed metric then fails a test (tests/test_metric_names.py
scans for names spelled out elsewhere), not a chart.

Each metric has its unit and the run page's chart it is drawn in (run_charts.js PLAN; none: a
chart of its own under "More metrics"). Names that hold something a run chose (a reward
function, a judge, k) are families: a template with {placeholders} and the function that fills
it. A shared schema (tests/test_layering.py SHARED_SCHEMAS): no imports beyond the standard library.
"""
import re
from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    description: str
    chart: str = ""  # the run page's chart (run_charts.js PLAN id); "": one of its own


@dataclass(frozen=True)
class MetricFamily:
    """`template`'s placeholders each match `.+` unless `patterns` gives a regex of their own."""
    template: str
    unit: str
    description: str
    chart: str = ""
    patterns: dict[str, str] = field(default_factory=dict, hash=False)

    def name(self, **members: object) -> str:
        return self.template.format(**members)

    @property
    def pattern(self) -> str:
        """A regex matching the family's names whole, one group per placeholder in order."""
        parts = re.split(r"\{(\w+)\}", self.template)
        return "^" + "".join(re.escape(part) if i % 2 == 0 else f"({self.patterns.get(part, '.+')})"
                             for i, part in enumerate(parts)) + "$"

    def members(self, name: str) -> tuple[str, ...] | None:
        """The placeholders' values in `name`, in order (None: not of this family)."""
        found = re.match(self.pattern, name)
        return found.groups() if found else None

    @property
    def glob(self) -> str:
        """The template with `*` for each placeholder (judge/*/pays_refused)."""
        return re.sub(r"\{\w+\}", "*", self.template)


CATALOGUE: dict[str, Metric] = {}


def _metric(name: str, unit: str, description: str, chart: str = "") -> str:
    CATALOGUE[name] = Metric(name, unit, description, chart)
    return name


# --- the policy update (worker/trainer/training/step.py, algorithm/loss.py) ----------------------
TRAIN_LOSS: Final = _metric("train/loss", "", "the step's GRPO loss", "loss")
TRAIN_ENTROPY: Final = _metric("train/entropy", "nats/token", "the policy's mean entropy over completion tokens",
                               "entropy")
TRAIN_GRAD_NORM: Final = _metric("train/grad_norm", "", "the gradient norm before clipping")
TRAIN_LEARNING_RATE: Final = _metric("train/learning_rate", "", "the scheduler's learning rate after the step")
TRAIN_ADVANTAGE_STD: Final = _metric("train/advantage_std", "", "the spread of the step's advantages")
TRAIN_CLIP_RATIO_LOW: Final = _metric("train/clip_ratio_low", "share", "tokens clipped below 1 - epsilon", "clip")
TRAIN_CLIP_RATIO_HIGH: Final = _metric("train/clip_ratio_high", "share", "tokens clipped above 1 + epsilon_high",
                                       "clip")
TRAIN_CLIP_RATIO_REGION: Final = _metric("train/clip_ratio_region", "share", "tokens clipped either way", "clip")
TRAIN_KL_TO_SAMPLER: Final = _metric("train/kl_to_sampler", "nats/token",
                                     "KL between the trainer's and the sampler's log-probs", "kl")
TRAIN_KL_TO_REFERENCE: Final = _metric("train/kl_to_reference", "nats/token",
                                       "KL to the reference model (beta > 0 only)", "kl")
TRAIN_IMPORTANCE_RATIO_MIN: Final = _metric("train/importance_ratio_min", "", "the smallest importance ratio")
TRAIN_IMPORTANCE_RATIO_MEAN: Final = _metric("train/importance_ratio_mean", "", "the mean importance ratio")
TRAIN_IMPORTANCE_RATIO_MAX: Final = _metric("train/importance_ratio_max", "", "the largest importance ratio")

# --- the step's groups (worker/trainer/rollout/metrics.py, rollout/pipeline_window.py) -----------
ROLLOUT_REWARD_MEAN: Final = _metric("rollout/reward_mean", "reward", "the weighted total reward's mean", "reward")
ROLLOUT_REWARD_STD: Final = _metric("rollout/reward_std", "reward", "the weighted total reward's spread", "reward")
ROLLOUT_REWARD_FN_MEAN: Final = MetricFamily("rollout/reward/{reward}_mean", "reward",
                                             "one reward function's mean, over the completions it scored", "reward")
ROLLOUT_REWARD_FN_STD: Final = MetricFamily("rollout/reward/{reward}_std", "reward",
                                            "one reward function's spread", "reward")
ROLLOUT_COMPLETION_LENGTH_MEAN: Final = _metric("rollout/completion_length_mean", "tokens",
                                                "a completion's mean length", "length")
ROLLOUT_COMPLETION_LENGTH_MIN: Final = _metric("rollout/completion_length_min", "tokens", "the shortest completion",
                                               "length")
ROLLOUT_COMPLETION_LENGTH_MAX: Final = _metric("rollout/completion_length_max", "tokens", "the longest completion",
                                               "length")
ROLLOUT_CLIPPED_RATIO: Final = _metric("rollout/clipped_ratio", "share", "completions cut at the length limit", "clip")
ROLLOUT_FRAC_REWARD_ZERO_STD: Final = _metric("rollout/frac_reward_zero_std", "share",
                                              "groups whose rewards are all equal: no learning signal")
ROLLOUT_GROUP_GENERATION_S: Final = _metric("rollout/group_generation_s", "s",
                                            "a group's mean time from submission until generated")
ROLLOUT_GROUP_SCORING_S: Final = _metric("rollout/group_scoring_s", "s",
                                         "a group's mean time from generated until scored")

# --- episodes of an environment (worker/trainer/rollout/metrics.py) ------------------------------
EPISODE_TURNS_MEAN: Final = _metric("episode/turns_mean", "turns", "assistant turns per episode", "episodes")
EPISODE_TOOL_CALLS_MEAN: Final = _metric("episode/tool_calls_mean", "calls", "tool calls per episode", "episodes")
EPISODE_TOKENS_MEAN: Final = _metric("episode/tokens_mean", "tokens", "an episode's mean length", "episodes")
EPISODE_TOOL_ERROR_RATE: Final = _metric("episode/tool_error_rate", "share", "tool calls that failed",
                                         "episode-ends")
EPISODE_CLEAN_TOOL_USE: Final = _metric("episode/clean_tool_use", "share",
                                        "episodes that called a tool and whose every call worked", "episode-ends")
EPISODE_END: Final = MetricFamily("episode/end/{reason}", "share", "episodes that ended for this reason",
                                  "episode-ends")

# --- held-out evaluation (worker/trainer/evaluation/outcomes.py) ---------------------------------
EVAL_PREFIX: Final = "eval/"
EVAL_REWARD_MEAN: Final = _metric("eval/reward_mean", "reward", "the held-out total reward's mean", "eval")
EVAL_PASS_AT_1: Final = _metric("eval/pass@1", "share", "held-out examples answered right", "eval")
EVAL_EXAMPLES: Final = _metric("eval/examples", "examples", "held-out examples evaluated")
EVAL_SECONDS: Final = _metric("eval/seconds", "s", "the evaluation's length")
EVAL_TRUNCATED: Final = _metric("eval/truncated", "share", "held-out answers cut at the length limit")
EVAL_PASS_AT_K: Final = MetricFamily("eval/pass@{k}", "share", "the chance that one of k answers is right", "eval",
                                     patterns={"k": r"\d+"})
EVAL_REWARD_FN_MEAN: Final = MetricFamily("eval/reward/{reward}_mean", "reward",
                                          "one reward function's held-out mean", "eval")
EVAL_EPISODE: Final = MetricFamily("eval/{metric}", "", "an episode/ metric over the held-out episodes",
                                   patterns={"metric": r"episode/.+"})

# --- the pipeline between rollouts and training (worker/trainer/loop/) ---------------------------
ASYNC_STALENESS_MEAN: Final = _metric("async/staleness_mean", "versions", "how old the trained groups are",
                                      "staleness")
ASYNC_STALENESS_MAX: Final = _metric("async/staleness_max", "versions", "the oldest trained group", "staleness")
ASYNC_DROPPED_STALE: Final = _metric("async/dropped_stale", "groups", "groups too stale to train on, in total",
                                     "staleness")
ASYNC_QUEUE_DEPTH: Final = _metric("async/queue_depth", "groups", "scored groups queued", "queue")
ASYNC_IN_FLIGHT: Final = _metric("async/in_flight", "groups", "groups submitted, not yet scored", "queue")
ASYNC_MAX_INFLIGHT: Final = _metric("async/max_inflight", "groups", "the in-flight cap in force", "queue")
ASYNC_AHEAD_BOUND: Final = _metric("async/ahead_bound", "groups", "the groups the staleness bound lets run ahead")
ASYNC_WAIT_FOR_ROLLOUTS_S: Final = _metric("async/wait_for_rollouts_s", "s", "the step's wait for its groups",
                                           "step-time")
ASYNC_WAIT_FOR_EXPIRING_S: Final = _metric("async/wait_for_expiring_s", "s",
                                           "of that wait, for a group about to expire", "step-time")
ASYNC_PAUSED_SHARE: Final = _metric("async/paused_share", "share", "submit polls while generation was paused")
ASYNC_BLOCKED_BY: Final = MetricFamily("async/blocked_by_{bound}", "share",
                                       "submit polls this bound held back, of those while generation could run")
ASYNC_BLOCKED_BY_STALENESS: Final = _metric("async/blocked_by_staleness", "share", "held back by staleness")
ASYNC_BLOCKED_BY_INFLIGHT_CAP: Final = _metric("async/blocked_by_inflight_cap", "share",
                                               "held back by the in-flight cap")
ASYNC_BLOCKED_BY_QUEUE: Final = _metric("async/blocked_by_queue", "share", "held back by a full queue")

# --- time and throughput (worker/trainer/loop/training_loop.py, training/step.py) -----------------
SYSTEM_STEP_TIME_S: Final = _metric("system/step_time_s", "s", "a whole step", "step-time")
SYSTEM_TRAIN_SECONDS: Final = _metric("system/train_seconds", "s", "the step's training", "step-time")
SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION: Final = _metric(
    "system/train_seconds_beside_generation", "s", "of the training, beside generation on fewer cores", "step-time")
SYSTEM_GENERATION_TOKENS_PER_S: Final = _metric("system/generation_tokens_per_s", "tokens/s",
                                                "tokens generated per second", "throughput")
SYSTEM_TRAINING_TOKENS_PER_S: Final = _metric("system/training_tokens_per_s", "tokens/s",
                                              "tokens trained per second", "throughput")
SYSTEM_MODEL_VERSION: Final = _metric("system/model_version", "version", "the served weights' version")
SYSTEM_WAIT_FOR_EVALUATION_S: Final = _metric("system/wait_for_evaluation_s", "s",
                                              "a sync's wait for the evaluation on the old weights")
SYSTEM_WEIGHT_SYNC_S: Final = _metric("system/weight_sync_s", "s", "pushing the weights to vLLM (0: no sync)",
                                      "sync")
SYSTEM_WEIGHT_SYNC_PART: Final = MetricFamily("system/weight_sync_{part}_s", "s", "a part of the weight sync",
                                              "sync")
SYSTEM_WEIGHT_SYNC_WRITE_S: Final = _metric("system/weight_sync_write_s", "s", "of which writing the file", "sync")
SYSTEM_WEIGHT_SYNC_SERVER_RELOAD_S: Final = _metric("system/weight_sync_server_reload_s", "s",
                                                    "of which the server's reload", "sync")
SYSTEM_WEIGHT_SYNC_UPLOAD_S: Final = _metric("system/weight_sync_upload_s", "s",
                                             "of which sending the file to vLLM's machines", "sync")
SYSTEM_WEIGHT_SYNC_SEND_S: Final = _metric("system/weight_sync_send_s", "s", "of which the NCCL broadcast", "sync")

# --- judges and reward models (worker/trainer/rewards/judges/, loop/step_reports.py) -------------
JUDGE_MEASURE: Final = MetricFamily("judge/{judge}/{measure}", "",
                                    "what a judge measured of itself (rewards/judges/metrics.py)",
                                    patterns={"measure": "[a-z_]+"})
JUDGE_DISAGREEMENT: Final = MetricFamily("judge/{judge}/disagreement", "share",
                                         "completions where the judge's pay and the verifiers' verdict differ",
                                         "judge-agreement")
JUDGE_PAYS_REFUSED: Final = MetricFamily("judge/{judge}/pays_refused", "share",
                                         "of the completions a verifier refuses, those the judge pays for",
                                         "judge-agreement")
