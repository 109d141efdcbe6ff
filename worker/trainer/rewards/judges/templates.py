"""What a judge is asked: its template filled in for one completion (score, choice) or for one
group (rank). A row whose template names a column it lacks is not asked: its error names the
column and the columns it has, so that a run's log says what to fix."""
from dataclasses import dataclass

from worker.trainer.rewards.judges.catalog import COMPLETION, COMPLETIONS, PROMPT, template_fields


@dataclass(frozen=True)
class Rendered:
    """One question for the judge (text), or why it could not be written (error)."""
    text: str | None
    error: str | None = None


def groups_of(prompts: list[str]) -> list[range]:
    """The consecutive runs of identical prompts: the groups a rank judge orders (the scorer calls a
    reward once per group, so one call is usually one group)."""
    runs, start = [], 0
    for index in range(1, len(prompts) + 1):
        if index == len(prompts) or prompts[index] != prompts[start]:
            runs.append(range(start, index))
            start = index
    return runs


def numbered(completions: list[str]) -> str:
    """A group as a rank judge sees it: "1. ...\\n2. ..."."""
    return "\n".join(f"{number}. {text}" for number, text in enumerate(completions, start=1))


def render(template: str, prompt: str, columns: dict[str, list], row: int, **builtins: str) -> Rendered:
    """The template for row `row` of the call's columns, with {prompt} and the given builtins."""
    values = {PROMPT: prompt, **builtins}
    for name in sorted(template_fields(template) - values.keys()):
        if name not in columns:
            present = ", ".join(sorted(columns)) or "none"
            return Rendered(None, f"the template names the column {name!r}, which this row lacks "
                                  f"(its columns: {present})")
        values[name] = _text(columns[name][row])
    return Rendered(template.format_map(values))


def render_completion(template: str, prompt: str, completion: str, columns: dict[str, list], row: int) -> Rendered:
    return render(template, prompt, columns, row, **{COMPLETION: completion})


def render_group(template: str, prompt: str, completions: list[str], columns: dict[str, list],
                 first_row: int) -> Rendered:
    return render(template, prompt, columns, first_row, **{COMPLETIONS: numbered(completions)})


def _text(value) -> str:
    return value if isinstance(value, str) else str(value)
