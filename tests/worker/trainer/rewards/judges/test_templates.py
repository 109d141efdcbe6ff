"""A judge's template filled in per completion or per group; a missing column named, not guessed."""
from worker.trainer.rewards.judges import templates


def test_groups_are_the_runs_of_identical_prompts():
    assert templates.groups_of(["a", "a", "b", "b", "b", "a"]) == [range(0, 2), range(2, 5), range(5, 6)]
    assert templates.groups_of([]) == []


def test_a_completion_is_asked_about_with_its_prompt_and_its_rows_columns():
    rendered = templates.render_completion("Q: {prompt}\nA: {completion}\nRef: {answer} {{literal}}", "2+2?", "4",
                                           {"answer": ["3", 4]}, row=1)
    assert rendered == templates.Rendered("Q: 2+2?\nA: 4\nRef: 4 {literal}")


def test_a_group_is_shown_numbered_from_1():
    rendered = templates.render_group("{prompt}\n{completions}", "Say hi", ["hi", "hello\nthere"], {}, first_row=0)
    assert rendered.text == "Say hi\n1. hi\n2. hello\nthere"


def test_a_column_the_row_lacks_is_its_error_naming_it_and_the_columns_it_has():
    rendered = templates.render_completion("{completion} vs {reference}", "p", "c", {"answer": ["1"], "level": [2]}, 0)
    assert rendered.text is None
    assert "'reference'" in rendered.error and "answer, level" in rendered.error
