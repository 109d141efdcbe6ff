"""What a judge reads as a task's prompt: the dataset's, not the policy's chat-rendered text."""
from worker.trainer.rollout.groups import task_prompt_text


def test_a_plain_prompt_is_read_as_it_is():
    assert task_prompt_text("What is 2 + 2?") == "What is 2 + 2?"


def test_chat_messages_are_role_and_content_lines():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}]
    assert task_prompt_text(messages) == "system: Be brief.\nuser: What is 2 + 2?"


def test_content_in_parts_keeps_its_text():
    messages = [{"role": "user", "content": [{"type": "text", "text": "Name"}, {"type": "text", "text": "it."}]}]
    assert task_prompt_text(messages) == "user: Name it."
