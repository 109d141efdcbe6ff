"""The reward a dry-run episode would get: the environment's rubric on its final answer, with the
columns a run's rubric reads of an episode (the trainer's rollout/scoring.episode_columns), and
the environment's own rewards (a cost per tool call, ...) as the trainer adds them."""
from runs.environments.models.environment import Environment
from runs.rewards.dry_run import score_rows
from runs.rewards.rows import DryRunRow, prompt_text
from worker.trainer.for_control_plane.episodes import extra_reward_functions


def score_episode(environment: Environment, env, row: dict, prompt_column: str, record, requested_by: int) -> dict:
    """`requested_by`: the id of the account asking; each reward's code runs in processes of that
    account and the reward's owner (rewards/sandbox_pool.py)."""
    final = next((turn["content"] for turn in reversed(record.turns) if turn["role"] == "assistant"), "")
    prompt = prompt_text(row.get(prompt_column))
    counts = {"tool_calls": record.tool_calls, "assistant_turns": record.assistant_turns}
    columns = {key: value for key, value in row.items() if key != prompt_column}
    columns.update(trajectories=record.turns, **counts)
    scored = [_scored(er.reward_function, er.weight, DryRunRow(0, prompt, columns, [final]), requested_by)
              for er in environment.environment_rewards.select_related("reward_function")]
    for function in extra_reward_functions(env):
        value = function.fn([prompt], [final], **{name: [count] for name, count in counts.items()})[0]
        scored.append({"name": function.name, "weight": function.weight, "score": value, "error": None,
                       "output": "", "environment": True})
    parts = [item["weight"] * item["score"] for item in scored if item["score"] is not None]
    return {"rubric": scored, "reward": sum(parts) if parts else None}


def _scored(reward, weight: float, row: DryRunRow, requested_by: int) -> dict:
    result = score_rows(reward, [row], requested_by)["rows"][0]
    return {"name": reward.name, "weight": weight, "score": (result["scores"] or [None])[0],
            "error": result["error"], "output": result["output"], "environment": False}
